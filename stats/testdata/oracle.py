#!/usr/bin/env python3
"""Independent oracle for package stats: writes stats/testdata/oracle.json.

Usage (from the repository root; needs NumPy and SciPy, Debian python3-scipy):

    /usr/bin/python3 stats/testdata/oracle.py > stats/testdata/oracle.json

The output is committed and read by TestOracle (oracle_test.go); CI never runs
this script. Rerun it only when the grid or a formula changes, and review the
diff of oracle.json.

What makes it an oracle rather than a copy of the Go code: it generates raw
per-unit data (visitors converting, buying, placing orders) with a fixed seed
and computes every expected value from those raw arrays with NumPy/SciPy --
variances with np.var/np.cov, the absolute Welch test with
scipy.stats.ttest_ind(equal_var=False), quantiles with scipy.stats.t/norm,
the Bayesian risk by numerical integration (scipy.integrate.quad) instead of
the closed form, SRM with scipy.stats.chisquare, the winsorization cap with
np.quantile. The Go side only sees the sufficient statistics derived from the
same arrays. The formulas it does spell out (delta-method lift variance,
proportion variance p(1-p), the sequential boundary, Holm, the conjugate
prior) are the textbook ones of DESIGN section 8 and stats/README.md.

Each case holds "request" (the exact JSON `lift stats` reads) and "expected"
(one entry per variant; "computable": false with a "reason" for degenerate
inputs).
"""

import json
import math
import sys

import numpy as np
from scipy import integrate, stats

SEED = 20261121
rng = np.random.default_rng(SEED)


# ---------------------------------------------------------------- raw data


def visitors_proportion(n, rate):
    return (rng.random(n) < rate).astype(float)


class ManyVisitors:
    """Conversions of more visitors than fit in memory as an array: only the
    count is drawn. Enough for proportion metrics, which need n and the sum."""

    def __init__(self, n, rate):
        self.n, self.k = n, int(rng.binomial(n, rate))

    def __len__(self):
        return self.n

    def sum(self):
        return float(self.k)

    def mean(self):
        return self.k / self.n


def visitors_revenue(n, buy_rate, mean_order):
    """Per-visitor revenue: most visitors buy nothing, buyers' totals are lognormal."""
    buys = rng.random(n) < buy_rate
    amount = rng.lognormal(math.log(mean_order) - 0.5, 1.0, n)
    return np.where(buys, np.round(amount, 2), 0.0)


def visitors_orders(n, buy_rate, mean_order):
    """Per-visitor (revenue, orders) for average order value = revenue / orders."""
    orders = np.where(rng.random(n) < buy_rate, rng.integers(1, 4, n), 0).astype(float)
    revenue = np.zeros(n)
    for k in (1, 2, 3):
        mask = orders >= k
        revenue[mask] += np.round(rng.lognormal(math.log(mean_order) - 0.5, 1.0, mask.sum()), 2)
    return revenue, orders


# ------------------------------------------------------- sufficient stats


def group_stats(kind, data, cap=None):
    if kind == "proportion":
        return {"n": int(len(data)), "sum": float(data.sum())}
    if kind == "mean":
        g = {"n": int(len(data)), "sum": float(data.sum()), "sum_squares": float((data**2).sum())}
        if cap is not None:
            c = np.minimum(data, cap)
            g["winsorized"] = {"sum": float(c.sum()), "sum_squares": float((c**2).sum())}
        return g
    m, d = data
    g = {
        "n": int(len(m)),
        "sum": float(m.sum()),
        "sum_squares": float((m**2).sum()),
        "denominator_sum": float(d.sum()),
        "denominator_sum_squares": float((d**2).sum()),
        "cross_sum": float((m * d).sum()),
    }
    if cap is not None:
        c = np.minimum(m, cap)
        g["winsorized"] = {"sum": float(c.sum()), "sum_squares": float((c**2).sum()), "cross_sum": float((c * d).sum())}
    return g


# ------------------------------------------------------------ expectations


def mean_and_unit_variance(kind, data, cap):
    """The metric value and the variance of one unit's contribution."""
    if kind == "proportion":
        p = data.mean()
        return p, p * (1 - p)  # DESIGN section 8: s^2 = p(1-p), not the n-1 sample variance
    if kind == "mean":
        y = data if cap is None else np.minimum(data, cap)
        return y.mean(), np.var(y, ddof=1)
    m, d = data
    if cap is not None:
        m = np.minimum(m, cap)
    cov = np.cov(m, d, ddof=1)
    grad = np.array([1 / d.mean(), -m.mean() / d.mean() ** 2])
    return m.sum() / d.sum(), float(grad @ cov @ grad)


def welch_df(va, na, vb, nb):
    return (va / na + vb / nb) ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))


def t_test(est, var, df, level):
    sd = math.sqrt(var)
    p = 2 * stats.t.sf(abs(est) / sd, df)
    q = stats.t.ppf((1 + level) / 2, df)
    return p, [est - q * sd, est + q * sd]


def sequential_test(est, var, n, alpha, tuning):
    """Always-valid p-value and confidence sequence (normal mixture)."""
    rho2 = (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / tuning
    s2 = var * n  # per-unit variance
    half = math.sqrt(s2) * math.sqrt(2 * (n * rho2 + 1) / (n**2 * rho2) * math.log(math.sqrt(n * rho2 + 1) / alpha))
    st2 = est**2 * n**2 / s2
    with np.errstate(over="ignore"):  # a huge e-value is a p-value of 0
        evalue = np.exp(rho2 * st2 / (2 * (n * rho2 + 1))) / math.sqrt(n * rho2 + 1)
    return float(min(1.0, 1 / evalue)), [est - half, est + half]


def posterior(est, var, prior, scale):
    if prior is None:
        return est, var
    pm, pv = prior["mean"] * scale, (prior["stddev"] * scale) ** 2
    prec = 1 / pv + 1 / var
    return (pm / pv + est / var) / prec, 1 / prec


def expected_loss(mu, sd, lower_is_better):
    """E[max(-D, 0)] (or E[max(D, 0)]) for D ~ N(mu, sd^2), by quadrature."""
    sign = -1.0 if lower_is_better else 1.0

    def integrand(x):
        return max(-sign * x, 0.0) * stats.norm.pdf(x, mu, sd)

    lo, hi = mu - 40 * sd, mu + 40 * sd
    # Split at 0 where the integrand has its kink.
    points = [0.0] if lo < 0 < hi else None
    val, _ = integrate.quad(integrand, lo, hi, points=points, limit=200, epsabs=1e-14, epsrel=1e-11)
    return val


def holm(ps):
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        out[i] = running
    return out


def degenerate_reason(kind, data):
    n = len(data) if kind != "ratio" else len(data[0])
    if n == 0:
        return "empty_group"
    if n == 1:
        return "too_few_units"
    if kind == "ratio" and data[1].sum() == 0:
        return "zero_denominator"
    return None


def expected_comparisons(kind, groups, opts, levels, lower_is_better):
    cap = opts.get("winsorization", {}).get("cap")
    conf, cred = levels
    prior = opts.get("prior")
    ctl = groups[0]
    out = []
    for i, trt in enumerate(groups[1:], start=1):
        entry = {"test_group_index": i}
        reason = degenerate_reason(kind, ctl) or degenerate_reason(kind, trt)
        if reason is None:
            ma, va = mean_and_unit_variance(kind, ctl, cap)
            mb, vb = mean_and_unit_variance(kind, trt, cap)
            na = len(ctl) if kind != "ratio" else len(ctl[0])
            nb = len(trt) if kind != "ratio" else len(trt[0])
            if ma == 0:
                reason = "control_mean_zero"
            elif ma < 0:
                reason = "control_mean_negative"
            elif va / na + vb / nb == 0 or (vb == 0 and mb == 0):
                reason = "zero_variance"
        if reason is not None:
            entry.update(computable=False, reason=reason)
            out.append(entry)
            continue
        lift = mb / ma - 1
        var_lift = vb / (nb * ma**2) + va * mb**2 / (na * ma**4)
        diff = mb - ma
        var_diff = va / na + vb / nb
        entry.update(computable=True, lift=lift, difference=diff)
        if "sequential" in opts:
            tuning = opts["sequential"].get("tuning_parameter", 5000)
            p, ci = sequential_test(lift, var_lift, na + nb, 1 - conf, tuning)
            dp, dci = sequential_test(diff, var_diff, na + nb, 1 - conf, tuning)
            entry.update(p_value=p, confidence_interval=ci, difference_p_value=dp, difference_interval=dci)
        else:
            df = welch_df(va, na, vb, nb)
            p, ci = t_test(lift, var_lift, df, conf)
            if kind == "mean":
                # The difference test straight from SciPy on the raw values.
                a = ctl if cap is None else np.minimum(ctl, cap)
                b = trt if cap is None else np.minimum(trt, cap)
                dp = float(stats.ttest_ind(b, a, equal_var=False).pvalue)
                _, dci = t_test(diff, var_diff, df, conf)
            else:
                dp, dci = t_test(diff, var_diff, df, conf)
            entry.update(p_value=p, confidence_interval=ci, difference_p_value=dp, difference_interval=dci,
                         degrees_of_freedom=df)
        mu, v = posterior(lift, var_lift, prior, 1.0)
        dmu, dv = posterior(diff, var_diff, prior, ma)
        z = stats.norm.ppf((1 + cred) / 2)
        chance = stats.norm.cdf(mu / math.sqrt(v))
        entry.update(
            expected_lift=mu,
            credible_interval=[mu - z * math.sqrt(v), mu + z * math.sqrt(v)],
            prob_beat_control=1 - chance if lower_is_better else chance,
            risk=expected_loss(dmu, math.sqrt(dv), lower_is_better),
        )
        out.append(entry)
    if opts.get("holm"):
        live = [e for e in out if e["computable"]]
        for key, adj_key in (("p_value", "adjusted_p_value"), ("difference_p_value", "adjusted_difference_p_value")):
            for e, a in zip(live, holm([e[key] for e in live])):
                e[adj_key] = a
    return out


def expected_srm(counts, splits):
    if min(counts) < 8:
        return {"status": "insufficient_data"}
    total = sum(counts)
    f_exp = [total * w / sum(splits) for w in splits]
    res = stats.chisquare(counts, f_exp)
    return {"status": "mismatch" if res.pvalue < 0.001 else "ok", "chi_square": float(res.statistic),
            "p_value": float(res.pvalue)}


# ------------------------------------------------------------------- grid


def make_case(name, kind, groups, opts=None, levels=(0.95, 0.95), lower_is_better=False, splits=None):
    opts = dict(opts or {})
    cap = None
    if "winsorization" in opts:
        pooled = np.concatenate([g if kind == "mean" else g[0] for g in groups])
        pct = opts["winsorization"]["percentile"]
        cap = float(np.quantile(pooled, pct))  # type 7, the engine's WinsorCap
        opts["winsorization"] = {"percentile": pct, "cap": cap}
    request = {
        "metric_kind": kind,
        "groups": [group_stats(kind, g, cap) for g in groups],
        "confidence_level": levels[0],
        "credible_interval_level": levels[1],
    }
    if lower_is_better:
        request["lower_is_better"] = True
    if opts:
        request["options"] = opts
    if splits:
        request["splits"] = splits
    expected = {"comparisons": expected_comparisons(kind, groups, opts, levels, lower_is_better)}
    if splits:
        expected["srm"] = expected_srm([g["n"] for g in request["groups"]], splits)
    return {"name": name, "request": request, "expected": expected}


def grid():
    cases = []
    prior = {"mean": 0.0, "stddev": 0.3}
    for n in (40, 800, 20000, 400000):
        for rates in ((0.05, 0.055), (0.3, 0.27), (0.5, 0.5, 0.6)):
            for opts in ({}, {"prior": prior}, {"sequential": {"tuning_parameter": 10000}}, {"holm": True}):
                groups = [visitors_proportion(n, r) for r in rates]
                tag = "+".join(sorted(opts)) or "plain"
                cases.append(make_case(f"proportion n={n} rates={rates} {tag}", "proportion", groups, opts))
    for n in (30, 1000, 50000):
        for buy in ((0.04, 0.05), (0.2, 0.2, 0.25)):
            for opts in ({}, {"prior": {"mean": 0.02, "stddev": 0.1}}, {"sequential": {}},
                         {"winsorization": {"percentile": 0.99}}, {"holm": True, "winsorization": {"percentile": 0.95}}):
                groups = [visitors_revenue(n, b, 60.0) for b in buy]
                tag = "+".join(sorted(opts)) or "plain"
                cases.append(make_case(f"mean n={n} buy={buy} {tag}", "mean", groups, opts,
                                       splits=[100 / len(buy)] * len(buy)))
    for n in (200, 5000, 100000):
        for opts in ({}, {"prior": prior}, {"sequential": {"tuning_parameter": 2000}},
                     {"winsorization": {"percentile": 0.98}}):
            groups = [visitors_orders(n, 0.3, 70.0), visitors_orders(n, 0.3, 75.0)]
            tag = "+".join(sorted(opts)) or "plain"
            cases.append(make_case(f"ratio n={n} {tag}", "ratio", groups, opts))
    # Levels, lower-is-better and unequal splits.
    cases.append(make_case("bounce lower is better 90%", "proportion",
                           [visitors_proportion(3000, 0.4), visitors_proportion(3000, 0.37)],
                           levels=(0.9, 0.8), lower_is_better=True, splits=[50, 50]))
    cases.append(make_case("time on site lower is better", "mean",
                           [rng.exponential(60.0, 500), rng.exponential(50.0, 480)], lower_is_better=True))
    cases.append(make_case("srm mismatch 70/30 split", "proportion",
                           [visitors_proportion(7000, 0.1), visitors_proportion(3300, 0.1)], splits=[70, 30]))
    cases.append(make_case("srm insufficient", "proportion",
                           [visitors_proportion(7, 0.5), visitors_proportion(9, 0.5)], splits=[50, 50]))
    # Past 10^7 degrees of freedom the engine uses the normal for Student's t.
    for opts in ({}, {"sequential": {"tuning_parameter": 1e8}}):
        cases.append(make_case("proportion 30M visitors a group " + ("+".join(opts) or "plain"), "proportion",
                               [ManyVisitors(30_000_000, 0.031), ManyVisitors(30_000_000, 0.0312)], opts))
    # Degenerate inputs: the expectation is a reason, not a number.
    zeros = np.zeros(50)
    cases.append(make_case("control has no conversions", "proportion", [zeros, visitors_proportion(50, 0.2)]))
    cases.append(make_case("everyone converts", "proportion", [np.ones(20), np.ones(25)]))
    cases.append(make_case("variant with one visitor", "mean", [visitors_revenue(100, 0.5, 20), np.array([3.0])]))
    cases.append(make_case("empty variant among three", "proportion",
                           [visitors_proportion(100, 0.3), np.zeros(0), visitors_proportion(100, 0.4)],
                           opts={"holm": True}))
    cases.append(make_case("profit negative in control", "mean",
                           [rng.normal(-2.0, 5.0, 300), rng.normal(1.0, 5.0, 300)]))
    cases.append(make_case("no orders in control", "ratio",
                           [(np.zeros(40), np.zeros(40)), visitors_orders(40, 0.5, 30.0)]))
    return cases


def winsor_cases():
    out = []
    for n, pct in ((10, 0.9), (101, 0.99), (1000, 0.95), (2500, 0.999)):
        values = np.round(rng.lognormal(3.0, 1.2, n), 2)
        denominators = rng.integers(1, 3, n).astype(float)
        cap = float(np.quantile(values, pct))
        c = np.minimum(values, cap)
        out.append({"values": values.tolist(), "denominators": denominators.tolist(), "percentile": pct,
                    "cap": cap, "sum": float(c.sum()), "sum_squares": float((c**2).sum()),
                    "cross_sum": float((c * denominators).sum())})
    return out


def main():
    doc = {
        "generated_by": "stats/testdata/oracle.py",
        "seed": SEED,
        "numpy": np.__version__,
        "scipy": __import__("scipy").__version__,
        "cases": grid(),
        "winsorize": winsor_cases(),
    }
    json.dump(doc, sys.stdout, indent=1, allow_nan=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
