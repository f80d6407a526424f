package experimenttest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
)

// testReleaseEnded: the sweep removes a test's platform resources
// DefaultReleaseAfter after its end (or its failed launch), once, with an
// audit record; a refusal is retried at the next sweep; an uninstalled shop
// is left alone.
func testReleaseEnded(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	ctx := experiment.WithActor(context.Background(), experiment.Actor{Name: "worker"})
	t0 := Epoch // each Setup has a backend of its own: the sweep sees this case's shops only
	ended := func(body string) *experiment.Test {
		x := b.Create(t, body)
		b.Act(t, x.ID, experiment.ActionStart)
		b.Act(t, x.ID, experiment.ActionEnd)
		return x
	}
	price, offer := ended(PriceTest("Released")), ended(TypeBodies()[experiment.TypeOffer])
	redirect := b.Create(t, TypeBodies()[experiment.TypeURLRedirect])
	b.Act(t, redirect.ID, experiment.ActionArchive) // never launched: nothing on the platform
	live := b.Create(t, TypeBodies()[experiment.TypeVisualEditor])
	b.Act(t, live.ID, experiment.ActionStart)
	b.Clock.Set(t0.Add(10 * 24 * time.Hour))
	recent := ended(PriceTest("Recent"))

	sweep := func(at time.Time, want experiment.ReleaseSummary) {
		t.Helper()
		b.Clock.Set(at)
		got, err := b.Service.ReleaseEnded(ctx, at)
		if err != nil || got != want {
			t.Fatalf("sweep at +%v = %+v, %v; want %+v", at.Sub(t0), got, err, want)
		}
	}
	sweep(t0.Add(experiment.DefaultReleaseAfter-time.Hour), experiment.ReleaseSummary{})
	// The fake platform reports a duplicate for each launch of a test.
	sweep(t0.Add(experiment.DefaultReleaseAfter+time.Hour), experiment.ReleaseSummary{Released: 3,
		ReleaseReport: experiment.ReleaseReport{DuplicateVariants: 2}})
	if got := b.Platform.Released(); !slices.Equal(got, []int64{price.ID, offer.ID}) {
		t.Fatalf("platform releases %v, want the price and offer tests %v (the redirect made nothing)", got, []int64{price.ID, offer.ID})
	}
	var reasons []string
	for _, r := range b.Audit(t, b.Shop.ID) {
		if r.Action == "experiment.release_platform" {
			reasons = append(reasons, r.ResourceID+": "+r.Reason)
		}
	}
	if len(reasons) != 3 || !strings.Contains(reasons[2], "removed 1 duplicate variants and 0 discounts") {
		t.Fatalf("audit of the releases = %q", reasons)
	}
	sweep(t0.Add(experiment.DefaultReleaseAfter+2*time.Hour), experiment.ReleaseSummary{}) // each once

	// The recent test is due ten days later; a refusal leaves it due.
	b.Platform.Fail(&experiment.PlatformError{Op: "delete duplicate variants", Status: 503, Message: "unavailable"})
	due := t0.Add(10*24*time.Hour + experiment.DefaultReleaseAfter + time.Hour)
	sweep(due, experiment.ReleaseSummary{Failed: 1})
	b.Platform.Fail(nil)
	sweep(due.Add(time.Hour), experiment.ReleaseSummary{Released: 1, ReleaseReport: experiment.ReleaseReport{DuplicateVariants: 1}})
	if got := b.Platform.Released(); !slices.Contains(got, recent.ID) {
		t.Fatalf("platform releases %v, want the recent test %d after the retry", got, recent.ID)
	}
	if got := b.Get(t, live.ID); got.Status != experiment.StatusActive {
		t.Fatalf("the live test is %s", got.Status)
	}

	t.Run("FailedLaunchThenRestarted", func(t *testing.T) {
		// A launch that failed partway may leave duplicates; a test left
		// failed is swept like an ended one. Started again, it is no longer
		// released, so its end is swept again.
		f := Setup(t, nb)
		f.Clock.Set(t0)
		x := f.Create(t, PriceTest("Failed"))
		f.Platform.Fail(&experiment.PlatformError{Op: "create duplicate variants", Status: 500, Message: "Internal Server Error"})
		if out := f.Act(t, x.ID, experiment.ActionStart); out.Test.Status != experiment.StatusFailed {
			t.Fatalf("the launch = %s, want failed", out.Test.Status)
		}
		f.Platform.Fail(nil)
		sweepOf := func(at time.Time, want int) {
			t.Helper()
			f.Clock.Set(at)
			got, err := f.Service.ReleaseEnded(ctx, at)
			if err != nil || got.Released != want {
				t.Fatalf("sweep at +%v = %+v, %v; want %d released", at.Sub(t0), got, err, want)
			}
		}
		sweepOf(t0.Add(experiment.DefaultReleaseAfter-time.Hour), 0)
		sweepOf(t0.Add(experiment.DefaultReleaseAfter+time.Hour), 1)
		if got := f.Platform.Released(); !slices.Equal(got, []int64{x.ID}) {
			t.Fatalf("platform releases %v, want the failed test %d", got, x.ID)
		}
		restart := t0.Add(experiment.DefaultReleaseAfter + 2*time.Hour)
		f.Clock.Set(restart)
		f.Act(t, x.ID, experiment.ActionStart)
		f.Act(t, x.ID, experiment.ActionEnd)
		sweepOf(restart.Add(experiment.DefaultReleaseAfter-time.Hour), 0)
		sweepOf(restart.Add(experiment.DefaultReleaseAfter+time.Hour), 1)
		if got := f.Platform.Released(); !slices.Equal(got, []int64{x.ID, x.ID}) {
			t.Fatalf("platform releases %v, want the test's end released too", got)
		}
	})
	t.Run("NotWhileUninstalled", func(t *testing.T) {
		u := Setup(t, nb)
		u.Clock.Set(t0)
		x := u.Create(t, PriceTest("Uninstalled"))
		u.Act(t, x.ID, experiment.ActionStart)
		u.Act(t, x.ID, experiment.ActionEnd)
		u.Uninstall(t, u.Shop)
		got, err := u.Service.ReleaseEnded(ctx, due.Add(2*time.Hour))
		if err != nil || slices.Contains(u.Platform.Released(), x.ID) || got.Released != 0 {
			t.Fatalf("sweep released %+v (%v) of an uninstalled shop: %v", got, err, u.Platform.Released())
		}
	})
}
