// The page of one test: the verdict, each group's figures, the comparison
// with the control, the cumulative daily chart, breakdowns and the export.
// Figures come from GET /v1/experiments/{id}/results (the snapshot); the
// daily series and the breakdowns from custom result queries, which a worker
// computes (POST …/results, then GET …/results/{query_id} until completed).
'use strict';

(() => {
  const { h, api, poll, fmt, badge, statusWords, show, errorBox, failed, again, views, isCurrent } = LiftApp;

  // The metrics the snapshot compares with the control (contract §2.8).
  const METRICS = {
    conversion_rate: { label: 'Conversion rate', kind: 'rate' },
    revenue_per_visitor: { label: 'Revenue per visitor', kind: 'money' },
    average_order_value: { label: 'Average order value', kind: 'money' },
    profit_per_visitor: { label: 'Profit per visitor', kind: 'money' },
    add_to_cart_rate: { label: 'Add-to-cart rate', kind: 'rate' },
    reached_checkout_rate: { label: 'Reached checkout', kind: 'rate' },
    click_through_rate: { label: 'Viewed a product', kind: 'rate' },
    bounce_rate: { label: 'Bounce rate', kind: 'rate', lowerIsBetter: true },
    avg_staying_time: { label: 'Time on site', kind: 'seconds' },
  };
  const DIMENSIONS = {
    device: 'Device', country: 'Country', visitor_type: 'New or returning', traffic_source: 'Traffic source',
    utm_source: 'UTM source', utm_medium: 'UTM medium', utm_campaign: 'UTM campaign', landing_page: 'Landing page',
  };
  // What the daily chart can show, cumulated day by day.
  const CHART = {
    conversion_rate: 'Conversion rate', revenue_per_visitor: 'Revenue per visitor',
    average_order_value: 'Average order value', sample_size: 'Visitors', orders: 'Orders',
  };
  const COLORS = ['#64748b', '#2563eb', '#d97706', '#059669', '#db2777', '#7c3aed'];

  // Custom queries asked in this tab, by test and body, for ten minutes:
  // switching breakdowns back and forth does not spend the query budget
  // again, and a tab left open still gets fresh figures later.
  const queries = new Map();
  const KEEP_MS = 10 * 60 * 1000;
  // Answers read with another token (another shop, maybe) are not reused.
  LiftApp.onTokenChange(() => queries.clear());

  // runQuery's answer is shared by every view that asks, so it polls to the
  // end even when the page that started it has moved on.
  function runQuery(id, body) {
    const key = id + ' ' + JSON.stringify(body);
    const kept = queries.get(key);
    if (kept && Date.now() - kept.at < KEEP_MS) return kept.p;
    const p = (async () => {
      const { data } = await api('POST', '/experiments/' + id + '/results', body);
      const done = await poll('/experiments/' + id + '/results/' + encodeURIComponent(data.id),
        (q) => q.status !== 'pending');
      if (done.status === 'failed') throw new LiftApp.APIError(0, 'query_failed', done.failure_reason || 'This query could not be computed.');
      return done;
    })();
    queries.set(key, { p, at: Date.now() });
    p.catch(() => queries.delete(key)); // a failure is not kept: the next view asks again
    return p;
  }

  function value(kind, v) {
    if (kind === 'money') return fmt.money(v);
    // Short visits differ by fractions of a second: whole seconds showed
    // "0 s vs 0 s" beside a lift of +43%.
    if (kind === 'seconds') return v === null || v === undefined ? '–' : (v < 10 ? v.toFixed(1) : Math.round(v)) + ' s';
    return fmt.pct(v);
  }

  function select(id, label, options, selected, onchange) {
    const s = h('select', { id, onchange: (ev) => onchange(ev.target.value) },
      Object.entries(options).map(([k, v]) => h('option', { value: k, selected: k === selected }, typeof v === 'string' ? v : v.label)));
    return h('label', { class: 'pick' }, label + ' ', s);
  }

  // cell is a table cell that keeps its column name for the phone layout.
  function cell(label, content, metric) {
    return h('td', { 'data-label': label, dataset: metric ? { metric } : null }, content);
  }

  function table(id, headers, rows) {
    return h('div', { class: 'table-wrap' },
      h('table', { id, class: 'stack' },
        h('thead', {}, h('tr', {}, headers.map((x) => h('th', { scope: 'col' }, x)))),
        h('tbody', {}, rows)));
  }

  // ---- the page --------------------------------------------------------

  views.test = async (id, gen) => {
    show(h('p', { class: 'muted' }, 'Loading…'));
    const [test, res] = await Promise.all([
      api('GET', '/experiments/' + id),
      api('GET', '/experiments/' + id + '/results').catch((error) => ({ error })),
    ]);
    if (!isCurrent(gen)) return;
    const t = test.data;
    const names = new Map((t.test_groups || []).map((g) => [g.index, g.name]));
    const name = (i) => names.get(i) || 'Group ' + i;
    const top = [h('p', { class: 'back' }, h('a', { href: '#/' }, '← All tests')), header(t)];
    if (res.error) {
      if (res.error.status === 401) return failed(res.error, gen);
      return show(...top, errorBox(res.error), again());
    }
    if (res.status === 202) {
      // 202 means nothing was ever computed; only a running test will be.
      const why = {
        paused: 'No results: this test was paused before its first results were computed. They are computed once it runs again.',
        ended: 'No results: this test ended before its first results were computed, so it has none.',
        archived: 'No results: this test stopped before its first results were computed, so it has none.',
      }[t.status] || 'No results yet: the first results are computed about 15 minutes after the test starts. Reload this page later.';
      return show(...top, h('p', { class: 'notice', id: 'pending' }, why));
    }
    const r = res.data;
    const primary = METRICS[t.primary_metric] ? t.primary_metric : 'conversion_rate';
    const compare = h('div', { id: 'compare' });
    const drawCompare = (m) => compare.replaceChildren(comparison(r, m, name));
    drawCompare(primary);
    const chartBox = h('div', { id: 'chart', class: 'chart' }, h('p', { class: 'muted' }, 'Loading the daily figures…'));
    const breakdownBox = h('div', { id: 'breakdown' }, h('p', { class: 'muted' }, 'Loading…'));
    let chartMetric = primary in CHART ? primary : 'conversion_rate';
    let daily = null;
    show(...top,
      verdict(r, primary, name),
      (r.warnings || []).length ? h('ul', { class: 'warnings', id: 'warnings' }, r.warnings.map((w) => h('li', {}, w))) : null,
      guardrails(r, name),
      h('section', { class: 'card' }, h('h2', {}, 'Groups'), groupsTable(r, name)),
      h('section', { class: 'card' },
        h('div', { class: 'section-head' }, h('h2', {}, 'Against the control'),
          select('metric', 'Metric', METRICS, primary, drawCompare)),
        compare),
      h('section', { class: 'card' },
        h('div', { class: 'section-head' }, h('h2', {}, 'Day by day, cumulative'),
          select('chart-metric', 'Show', CHART, chartMetric, (m) => { chartMetric = m; if (daily) drawChart(chartBox, daily, m, name); })),
        chartBox),
      h('section', { class: 'card' },
        h('div', { class: 'section-head' }, h('h2', {}, 'Breakdown'),
          select('dimension', 'By', DIMENSIONS, 'device', (d) => loadBreakdown(id, d, breakdownBox, name, gen))),
        breakdownBox),
      exportSection(id, gen));

    runQuery(id, { breakdown: ['date'] }).then((q) => {
      if (!isCurrent(gen)) return;
      daily = q;
      drawChart(chartBox, daily, chartMetric, name);
    }, (err) => isCurrent(gen) && chartBox.replaceChildren(errorBox(err)));
    loadBreakdown(id, 'device', breakdownBox, name, gen);
  };

  function header(t) {
    const when = [t.started_at ? 'Started ' + fmt.date(t.started_at) : 'Not started', t.ended_at ? 'ended ' + fmt.date(t.ended_at) : null];
    // Why Lift paused the test by itself (a guardrail breach). The test's
    // own pause_reason, not the snapshot's: a resume clears it, while the
    // last snapshot keeps the reason until the next one is taken.
    const paused = t.status === 'paused' && t.pause_reason;
    // Why a launch ended in failed (the platform refused, or a scheduled
    // start met a live test holding the same product): the merchant's next
    // step is in it.
    const failedWhy = t.status === 'failed' && t.failure_reason;
    return h('header', { class: 'test-head' },
      h('h1', { id: 'test-name' }, t.name),
      h('p', { class: 'meta' }, badge(statusWords[t.status] || t.status, t.status), ' ', t.type.replace('_', ' '), ' · ', when.filter(Boolean).join(', ')),
      t.hypothesis ? h('p', { class: 'hypothesis' }, t.hypothesis) : null,
      paused ? h('p', { class: 'error', id: 'pause-reason', role: 'status' }, h('strong', {}, 'Lift paused this test. '), t.pause_reason) : null,
      failedWhy ? h('p', { class: 'error', id: 'failure-reason', role: 'status' }, h('strong', {}, 'This test did not launch. '), t.failure_reason) : null);
  }

  // guardrails shows each guardrail as the snapshot found it: the metric,
  // the harm it tolerates, its status and the worst variant's lift.
  function guardrails(r, name) {
    const list = r.guardrails || [];
    if (!list.length) return null;
    const words = {
      ok: ['Within the limit', 'good'], breached: ['Breached', 'bad'],
      not_monitored: ['Not watched: needs sequential analysis', 'neutral'],
      insufficient_data: ['Too few visitors to check yet', 'neutral'],
    };
    const cols = ['Metric', 'Tolerated harm', 'Status', 'Worst variant'];
    const rows = list.map((g) => {
      const [text, kind] = words[g.status] || [g.status, 'neutral'];
      const worst = g.lift === null || g.lift === undefined ? '–'
        : (g.test_group_index === null || g.test_group_index === undefined ? '' : name(g.test_group_index) + ': ') + fmt.lift(g.lift);
      return h('tr', { dataset: { metric: g.metric, status: g.status } },
        h('th', { scope: 'row', 'data-label': cols[0] }, METRICS[g.metric] ? METRICS[g.metric].label : g.metric),
        cell(cols[1], 'at most ' + (g.max_harm * 100).toFixed(1).replace(/\.0$/, '') + '% worse', 'max_harm'),
        cell(cols[2], badge(text, kind), 'status'),
        cell(cols[3], worst, 'lift'));
    });
    return h('section', { class: 'card', id: 'guardrails-section' }, h('h2', {}, 'Guardrails'), table('guardrails', cols, rows));
  }

  // verdict is the outcome on the primary metric and the split check.
  function verdict(r, primary, name) {
    const win = r.winning_test_group_index;
    const label = METRICS[primary].label.toLowerCase();
    let head, kind, detail;
    if (r.outcome === 'winner' && win === 0) {
      [head, kind, detail] = ['The control wins', 'bad', 'No variant beat the control on ' + label + '.'];
    } else if (r.outcome === 'winner') {
      const vs = (r.test_groups.find((g) => g.test_group_index === win) || {}).vs_control || {};
      const p = vs[primary] && vs[primary].bayesian ? vs[primary].bayesian.prob_beat_control : null;
      [head, kind, detail] = ['Winner: ' + name(win), 'good',
        name(win) + ' beats the control on ' + label + (p !== null ? ' with a ' + fmt.prob(p) + ' chance.' : '.')];
    } else if (r.outcome === 'inconclusive') {
      [head, kind, detail] = ['No winner yet', 'neutral', 'No group is clearly better on ' + label + ' so far.'];
    } else if (r.outcome === 'insufficient_data') {
      [head, kind, detail] = ['Not enough data yet', 'neutral', 'Each group needs at least 100 visitors before Lift calls a winner.'];
    } else {
      [head, kind, detail] = [r.outcome, 'neutral', ''];
    }
    const srm = {
      ok: ['Traffic split as configured', 'good'],
      mismatch: ['Traffic split does not match the configuration: the figures may be biased. Check the test\'s setup before trusting a winner.', 'bad'],
      insufficient_data: ['Too few visitors to check the traffic split yet', 'neutral'],
    }[r.srm_status] || [r.srm_status, 'neutral'];
    return h('section', { class: 'verdicts' },
      h('div', { id: 'outcome', class: 'verdict ' + kind, dataset: { outcome: r.outcome, winner: win === null || win === undefined ? '' : String(win) } },
        h('strong', {}, head), h('span', {}, detail)),
      h('div', { id: 'srm', class: 'verdict ' + srm[1], dataset: { status: r.srm_status } },
        h('strong', {}, 'Sample ratio'), h('span', {}, srm[0])),
      h('p', { class: 'muted stamp' }, 'Computed ' + fmt.date(r.computed_at) +
        (r.date_range ? ' · covers ' + fmt.days(r.date_range) : '') +
        (r.next_refresh_at ? ' · next update ' + fmt.date(r.next_refresh_at) : '')));
  }

  function groupsTable(r, name) {
    const cols = ['Group', 'Visitors', 'Orders', 'Conversion', 'Revenue', 'Revenue / visitor', 'Average order', 'Added to cart'];
    const rows = r.test_groups.map((g) => h('tr', { dataset: { group: String(g.test_group_index) },
      class: r.outcome === 'winner' && r.winning_test_group_index === g.test_group_index ? 'winner' : null },
    h('th', { scope: 'row', 'data-label': cols[0] }, name(g.test_group_index),
      g.test_group_index === 0 ? badge('control', 'neutral') : null,
      r.outcome === 'winner' && r.winning_test_group_index === g.test_group_index ? badge('winner', 'good') : null),
    cell(cols[1], fmt.int(g.sample_size), 'sample_size'),
    cell(cols[2], fmt.int(g.orders), 'orders'),
    cell(cols[3], fmt.pct(g.conversion_rate), 'conversion_rate'),
    cell(cols[4], fmt.money(g.revenue), 'revenue'),
    cell(cols[5], fmt.money(g.revenue_per_visitor), 'revenue_per_visitor'),
    cell(cols[6], fmt.money(g.average_order_value), 'average_order_value'),
    cell(cols[7], fmt.pct(g.add_to_cart_rate), 'add_to_cart_rate')));
    return table('groups', cols, rows);
  }

  // comparison shows each variant against the control on metric m: lift,
  // its intervals, the chance to beat the control, and a bar of the
  // confidence interval around 0.
  function comparison(r, m, name) {
    const spec = METRICS[m];
    const a = r.analysis || {};
    const cred = Math.round((a.credible_interval_level || 0.95) * 100) + '%';
    const conf = Math.round((a.confidence_level || 0.95) * 100) + '%';
    const variants = r.test_groups.filter((g) => g.vs_control && g.vs_control[m]);
    let span = 0.05;
    for (const g of variants) {
      const f = g.vs_control[m].frequentist;
      if (f) span = Math.max(span, Math.abs(f.confidence_interval.lower), Math.abs(f.confidence_interval.upper));
    }
    const control = r.test_groups.find((g) => g.test_group_index === 0);
    const cols = ['Group', spec.label, 'Lift', cred + ' credible interval', 'Chance to beat control', 'p-value', conf + ' confidence interval'];
    const rows = variants.map((g) => {
      const vs = g.vs_control[m];
      const label = h('th', { scope: 'row', 'data-label': cols[0] }, name(g.test_group_index));
      const val = cell(cols[1], value(spec.kind, g[m]) + ' vs ' + value(spec.kind, control ? control[m] : null), 'value');
      if (vs.lift === null || vs.lift === undefined) {
        return h('tr', { dataset: { group: String(g.test_group_index) } }, label, val,
          h('td', { colspan: 5, class: 'muted', 'data-label': 'Why no figures' }, vs.message || 'This comparison cannot be computed yet.'));
      }
      const b = vs.bayesian, f = vs.frequentist;
      return h('tr', { dataset: { group: String(g.test_group_index) } }, label, val,
        cell(cols[2], h('span', { class: liftClass(vs.lift, f, spec) }, fmt.lift(vs.lift)), 'lift'),
        cell(cols[3], fmt.lift(b.credible_interval.lower) + ' to ' + fmt.lift(b.credible_interval.upper), 'credible_interval'),
        cell(cols[4], fmt.prob(b.prob_beat_control), 'prob_beat_control'), // the API already counts lower as better here
        cell(cols[5], f.p_value < 0.001 ? '< 0.001' : f.p_value.toFixed(3), 'p_value'),
        cell(cols[6], [h('span', { class: 'ci-text' }, fmt.lift(f.confidence_interval.lower) + ' to ' + fmt.lift(f.confidence_interval.upper)),
          intervalBar(f.confidence_interval, vs.lift, span, spec)], 'confidence_interval'));
    });
    if (!rows.length) return h('p', { class: 'muted' }, 'This test has no variant to compare.');
    return h('div', {}, table('comparison', cols, rows),
      spec.lowerIsBetter ? h('p', { class: 'muted' }, 'Lower is better for this metric: the chance shown is the chance to be lower than the control.') : null);
  }

  function liftClass(lift, f, spec) {
    if (!f) return '';
    const up = f.confidence_interval.lower > 0, down = f.confidence_interval.upper < 0;
    if (!up && !down) return '';
    return (up !== Boolean(spec.lowerIsBetter)) ? 'up' : 'down';
  }

  // intervalBar draws [lower, upper] on a scale of ±span with 0 in the
  // middle. Positions are set through element.style (CSSOM), which the
  // page's CSP allows, unlike style attributes.
  function intervalBar(ci, lift, span, spec) {
    const pos = (x) => 50 + Math.max(-50, Math.min(50, (x / span) * 50));
    const range = h('span', { class: 'range ' + liftClass(lift, { confidence_interval: ci }, spec) });
    range.style.left = pos(ci.lower) + '%';
    range.style.width = Math.max(0.5, pos(ci.upper) - pos(ci.lower)) + '%';
    const dot = h('span', { class: 'dot' });
    dot.style.left = pos(lift) + '%';
    return h('span', { class: 'ci', 'aria-hidden': 'true' }, h('span', { class: 'zero' }), range, dot);
  }

  // ---- the daily chart ----------------------------------------------

  // cumulate turns a date breakdown's rows into one point a day per group,
  // each the figure over every visitor up to that day. Days without rows
  // carry the previous value.
  function cumulate(q, metric) {
    const rows = (q.breakdown && q.breakdown.rows) || [];
    const groups = [...new Set(rows.map((r) => r.test_group_index))].sort((x, y) => x - y);
    const byDay = new Map();
    for (const r of rows) {
      if (!/^\d{4}-\d{2}-\d{2}$/.test(r.dimension_value)) continue;
      if (!byDay.has(r.dimension_value)) byDay.set(r.dimension_value, new Map());
      byDay.get(r.dimension_value).set(r.test_group_index, r);
    }
    const days = [];
    const first = q.date_range ? q.date_range.gte : [...byDay.keys()].sort()[0];
    const last = q.date_range ? q.date_range.lte : [...byDay.keys()].sort().pop();
    for (let d = new Date(first + 'T00:00:00Z'); first && d <= new Date(last + 'T00:00:00Z'); d.setUTCDate(d.getUTCDate() + 1)) {
      days.push(d.toISOString().slice(0, 10));
    }
    const sums = groups.map(() => ({ n: 0, conv: 0, orders: 0, revenue: 0 }));
    const ys = groups.map(() => []);
    let currency = 'USD';
    for (const day of days) {
      groups.forEach((g, i) => {
        const r = byDay.has(day) && byDay.get(day).get(g);
        const s = sums[i];
        if (r) {
          s.n += r.sample_size;
          s.conv += Math.round(r.conversion_rate * r.sample_size);
          s.orders += r.orders;
          s.revenue += Number(r.revenue.amount);
          currency = r.revenue.currency || currency;
        }
        const ratio = (x, y) => (y > 0 ? x / y : null);
        ys[i].push({ conversion_rate: ratio(s.conv, s.n), revenue_per_visitor: ratio(s.revenue, s.n),
          average_order_value: ratio(s.revenue, s.orders), sample_size: s.n, orders: s.orders }[metric]);
      });
    }
    return { xs: days.map((d) => Date.parse(d + 'T00:00:00Z') / 1000), groups, ys, currency };
  }

  function chartFormat(metric, currency) {
    if (metric === 'conversion_rate') return (v) => fmt.pct(v, 2);
    if (metric === 'sample_size' || metric === 'orders') return (v) => fmt.int(Math.round(v));
    return (v) => fmt.money({ amount: v, currency });
  }

  const DAY = 86400;
  const dayLabel = (ts) => new Date(ts * 1000).toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });

  function drawChart(box, q, metric, name) {
    const c = cumulate(q, metric);
    if (box._plot) box._plot.destroy();
    if (box._resize) box._resize.disconnect();
    box.replaceChildren();
    box.dataset.state = 'empty';
    if (!c.xs.length || !c.groups.length) {
      box.append(h('p', { class: 'muted' }, 'No daily figures yet.'));
      return;
    }
    const f = chartFormat(metric, c.currency);
    const size = () => ({ width: Math.max(box.clientWidth, 200), height: box.clientWidth < 500 ? 220 : 300 });
    const opts = Object.assign(size(), {
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC'),
      scales: { x: { time: true } },
      cursor: { drag: { x: false, y: false } },
      series: [{ label: 'Day', value: (u, v) => (v === null || v === undefined ? '–' : dayLabel(v)) }]
        .concat(c.groups.map((g, i) => ({ label: name(g), stroke: COLORS[g % COLORS.length], width: 2,
          points: { show: c.xs.length < 40, size: 6 }, value: (u, v) => (v === null || v === undefined ? '–' : f(v)) }))),
      // Ticks on whole days: the series has one point a day.
      axes: [{ stroke: '#475569', incrs: [DAY, 2 * DAY, 7 * DAY, 14 * DAY, 28 * DAY], values: (u, vals) => vals.map(dayLabel) },
        { stroke: '#475569', size: 70, values: (u, vals) => vals.map(f) }],
    });
    // The legend starts on the last day (the whole run so far), not on dashes.
    opts.hooks = { ready: [(u) => u.setLegend({ idx: c.xs.length - 1 })] };
    box._plot = new uPlot(opts, [c.xs, ...c.ys], box);
    // The canvas answers the mouse only: the same figures as a table, for
    // the keyboard and screen readers.
    const cell = (v) => h('td', {}, v === null || v === undefined ? '–' : f(v));
    box.append(h('details', { class: 'chart-table' }, h('summary', {}, 'These figures as a table'),
      table('chart-figures', ['Day (the shop\'s)', ...c.groups.map(name)],
        c.xs.map((x, i) => h('tr', {}, h('th', { scope: 'row' }, new Date(x * 1000).toISOString().slice(0, 10)),
          c.ys.map((y) => cell(y[i])))))));
    box._resize = new ResizeObserver(() => box._plot.setSize(size()));
    box._resize.observe(box);
    box.dataset.state = 'drawn';
    box.dataset.days = String(c.xs.length);
  }

  // ---- breakdowns -----------------------------------------------------

  async function loadBreakdown(id, dim, box, name, gen) {
    box.replaceChildren(h('p', { class: 'muted' }, 'Computing the breakdown by ' + DIMENSIONS[dim].toLowerCase() + '…'));
    box.dataset.state = 'loading';
    try {
      const q = await runQuery(id, { breakdown: [dim] });
      if (!isCurrent(gen) || document.getElementById('dimension').value !== dim) return;
      box.replaceChildren(breakdownTable(q, dim, name));
      box.dataset.state = 'ready';
      box.dataset.dimension = dim;
    } catch (err) {
      if (isCurrent(gen)) box.replaceChildren(errorBox(err));
    }
  }

  function breakdownTable(q, dim, name) {
    const rows = ((q.breakdown && q.breakdown.rows) || []).slice()
      .sort((x, y) => (x.dimension_value < y.dimension_value ? -1 : x.dimension_value > y.dimension_value ? 1 : x.test_group_index - y.test_group_index));
    if (!rows.length) return h('p', { class: 'muted' }, 'No visitors in this window yet.');
    const srm = { ok: 'as configured', mismatch: 'mismatch', insufficient_data: 'too few to check' };
    const cols = [DIMENSIONS[dim], 'Group', 'Visitors', 'Orders', 'Conversion', 'Revenue / visitor', 'Average order', 'Split'];
    const out = rows.map((r, i) => h('tr', { class: i > 0 && rows[i - 1].dimension_value === r.dimension_value ? 'same' : 'first',
      dataset: { value: r.dimension_value, group: String(r.test_group_index) } },
    h('th', { scope: 'row', 'data-label': cols[0] }, r.dimension_value === '' ? '(not known)' : r.dimension_value),
    cell(cols[1], name(r.test_group_index)),
    cell(cols[2], fmt.int(r.sample_size), 'sample_size'),
    cell(cols[3], fmt.int(r.orders), 'orders'),
    cell(cols[4], fmt.pct(r.conversion_rate), 'conversion_rate'),
    cell(cols[5], fmt.money(r.revenue_per_visitor), 'revenue_per_visitor'),
    cell(cols[6], fmt.money(r.average_order_value), 'average_order_value'),
    cell(cols[7], r.srm_status ? srm[r.srm_status] || r.srm_status : '–', 'srm_status')));
    return h('div', {}, table('breakdown-table', cols, out),
      h('p', { class: 'muted' }, 'Figures only: lift and significance are computed for the whole test above. ' +
        'Covers ' + fmt.days(q.date_range) + ', computed ' + fmt.date(q.computed_at) + '.'));
  }

  // ---- the export -------------------------------------------------------

  function exportSection(id, gen) {
    const status = h('p', { id: 'export-status', class: 'muted' }, 'Every order of this test, one row each, as a CSV file.');
    const button = h('button', { id: 'export', type: 'button' }, 'Export orders (CSV)');
    button.addEventListener('click', async () => {
      button.disabled = true;
      status.replaceChildren('Preparing the export…');
      try {
        const { data } = await api('POST', '/experiments/' + id + '/exports');
        const x = data.status === 'completed' ? data
          : await poll('/exports/' + encodeURIComponent(data.id), (e) => e.status === 'completed' || e.status === 'failed', gen);
        if (!x) return;
        if (x.status === 'failed' || !x.download_url) {
          status.replaceChildren(h('span', { class: 'error' }, 'The export could not be made. Try again later.'));
        } else {
          const until = x.expires_at ? fmt.time(x.expires_at) : null;
          status.replaceChildren(h('a', { id: 'download', href: x.download_url, rel: 'noopener' },
            'Download CSV (' + fmt.int(x.row_count) + ' orders)'),
          until ? ' · the link works until ' + until + '; export again for a new one.' : '');
        }
      } catch (err) {
        status.replaceChildren(errorBox(err));
      } finally {
        button.disabled = false;
      }
    });
    return h('section', { class: 'card', id: 'export-section' }, h('h2', {}, 'Export'), h('div', { class: 'row' }, button), status);
  }
})();
