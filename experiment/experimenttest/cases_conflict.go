package experimenttest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/experiment"
)

// redirectTest is a url_redirect test from source (exact) to destination.
func redirectTest(name, source, destination string) string {
	return fmt.Sprintf(`{"type":"url_redirect","name":%q,"shared":{"url_redirect":{"source_path":%q}},"test_groups":`+twoGroups+`}`,
		name, source, fmt.Sprintf(`{"destination":%q}`, destination))
}

// testContested: a start or resume is refused while another live test
// changes the same part of the storefront for visitors both can reach
// (conflict.go), and nothing about the refused test changes.
func testContested(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	ctx := experiment.WithActor(context.Background(), experiment.Actor{Name: "worker"})
	// created makes a test of body ready to start (theme and template tests
	// first pass their launch checks).
	created := func(t *testing.T, body string) *experiment.Test {
		t.Helper()
		x := b.Create(t, body)
		if x.ChecksPending {
			if err := b.Service.RunChecks(ctx, b.Shop.ID, x.ID); err != nil {
				t.Fatal(err)
			}
		}
		return b.Get(t, x.ID)
	}
	refused := func(t *testing.T, x *experiment.Test, a experiment.Action, holder *experiment.Test, part string) {
		t.Helper()
		launches := len(b.Platform.Launches())
		_, err := b.act(x.ID, a)
		e := WantCode(t, err, experiment.KindValidation, "launch_blocked")
		if e.Param != "" || len(e.Findings) != 1 || e.Findings[0].Code != "launch_blocked" ||
			!strings.Contains(e.Message, fmt.Sprintf("Test %d (%q, %s) already changes %s", holder.ID, holder.Name, holder.Status, part)) {
			t.Fatalf("%s refused as %+v, want test %d named with %q", a, e, holder.ID, part)
		}
		if diff := cmp.Diff(x, b.Get(t, x.ID)); diff != "" {
			t.Fatalf("a refused %s changed the test (-before +after):\n%s", a, diff)
		}
		if len(b.Platform.Launches()) != launches {
			t.Fatalf("a refused %s reached the platform", a)
		}
	}

	t.Run("SameProduct", func(t *testing.T) {
		first := created(t, PriceTest("First"))
		b.Act(t, first.ID, experiment.ActionStart)
		second := created(t, PriceTest("Second"))
		first = b.Get(t, first.ID)
		refused(t, second, experiment.ActionStart, first, "the price of product "+Tee)
		// A paused test resumes with its changes in place: it still holds.
		b.Act(t, first.ID, experiment.ActionPause)
		refused(t, second, experiment.ActionStart, b.Get(t, first.ID), "the price of product "+Tee)
		b.Act(t, first.ID, experiment.ActionEnd)
		if out := b.Act(t, second.ID, experiment.ActionStart); out.Test.Status != experiment.StatusActive {
			t.Fatalf("once the first ended, the second = %s", out.Test.Status)
		}
	})
	t.Run("SameProductImages", func(t *testing.T) {
		// Two image tests of the tee: the storefront shows one set of
		// its images. Its CSS-only edits and its price hold nothing of them.
		image := func(name, url string) string {
			return `{"type":"visual_editor","name":"` + name + `","shared":{"visual_editor":{"product_ids":["` + Tee + `"]}},
			"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,
			"content":{"images":[{"product_id":"` + Tee + `","urls":["` + url + `"]}]}}]}`
		}
		first := created(t, image("Hero A", "/cdn/a.jpg"))
		b.Act(t, first.ID, experiment.ActionStart)
		css := created(t, `{"type":"visual_editor","name":"CSS","shared":{"visual_editor":{"product_ids":["`+Tee+`"]}},
			"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"custom_css":"h1{}"}}]}`)
		b.Act(t, css.ID, experiment.ActionStart)
		second := created(t, image("Hero B", "https://cdn.example.com/b.jpg"))
		refused(t, second, experiment.ActionStart, b.Get(t, first.ID), "the images of product "+Tee)
		b.Act(t, first.ID, experiment.ActionEnd)
		if out := b.Act(t, second.ID, experiment.ActionStart); out.Test.Status != experiment.StatusActive {
			t.Fatalf("once the first ended, the second = %s", out.Test.Status)
		}
	})
	t.Run("WarnedBeforeTheStart", func(t *testing.T) {
		// Create and PATCH of a test not launched yet warn that its start
		// will be refused; the launched test itself is not warned.
		live := created(t, withFields(PriceTest("Live"), `"audience":{"countries":["US"]}`))
		b.Act(t, live.ID, experiment.ActionStart)
		want := fmt.Sprintf("Test %d (\"Live\", active) already changes the price of product %s for the visitors this test would reach: this test cannot start until it ends", live.ID, Tee)
		warned := func(t *testing.T, what string, w []experiment.Finding) {
			t.Helper()
			if len(w) != 1 || w[0].Code != "live_test_overlap" || w[0].Severity != experiment.SeverityWarning || !strings.HasPrefix(w[0].Message, want) {
				t.Fatalf("%s warnings = %+v, want live_test_overlap naming test %d", what, w, live.ID)
			}
		}
		out, err := b.Service.Create(b.Ctx(), b.Shop, []byte(PriceTest("Waiting")), JSONReply(201))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Service.Apply(b.Ctx(), b.Shop, out.Test.ID, experiment.ActionArchive, nil) })
		warned(t, "create", out.Warnings)
		patched, err := b.Service.Update(b.Ctx(), b.Shop, out.Test.ID, []byte(`{"name":"Still waiting"}`), JSONReply(200))
		if err != nil {
			t.Fatal(err)
		}
		warned(t, "PATCH", patched.Warnings)
		other, err := b.Service.Create(b.Ctx(), b.Shop, []byte(withFields(PriceTest("Elsewhere"), `"audience":{"countries":["DE"]}`)), JSONReply(201))
		if err != nil || len(other.Warnings) != 0 {
			t.Fatalf("a test whose audience cannot meet the live one's: %v, warnings %+v", err, other.Warnings)
		}
		self, err := b.Service.Update(b.Ctx(), b.Shop, live.ID, []byte(`{"name":"Live, renamed"}`), JSONReply(200))
		if err != nil || len(self.Warnings) != 0 {
			t.Fatalf("PATCH of the live test: %v, warnings %+v", err, self.Warnings)
		}
	})
	t.Run("AudiencesThatCannotMeet", func(t *testing.T) {
		us := created(t, withFields(PriceTest("US"), `"audience":{"countries":["US","CA"]}`))
		b.Act(t, us.ID, experiment.ActionStart)
		de := created(t, withFields(PriceTest("DE"), `"audience":{"countries":["DE"]}`))
		b.Act(t, de.ID, experiment.ActionStart)
		// Mobile visitors in Canada are in the US test's audience.
		mobile := created(t, withFields(PriceTest("Mobile"), `"audience":{"devices":["mobile"],"countries":["CA","FR"]}`))
		refused(t, mobile, experiment.ActionStart, b.Get(t, us.ID), "the price of product "+Tee)
	})
	t.Run("DifferentPartsRunTogether", func(t *testing.T) {
		for _, k := range []experiment.Type{experiment.TypePrice, experiment.TypeShipping, experiment.TypeTheme,
			experiment.TypeURLRedirect, experiment.TypeOffer, experiment.TypeVisualEditor} {
			x := created(t, TypeBodies()[k])
			if out := b.Act(t, x.ID, experiment.ActionStart); out.Test.Status != experiment.StatusActive {
				t.Fatalf("%s beside the others = %s", k, out.Test.Status)
			}
		}
	})
	t.Run("ThemeAndTemplate", func(t *testing.T) {
		theme := created(t, TypeBodies()[experiment.TypeTheme])
		b.Act(t, theme.ID, experiment.ActionStart)
		template := created(t, TypeBodies()[experiment.TypeTemplate])
		refused(t, template, experiment.ActionStart, b.Get(t, theme.ID), "the theme their visitors see")
	})
	t.Run("RedirectLoopAndChain", func(t *testing.T) {
		there := created(t, redirectTest("There", "/pages/a", "/pages/b?from=a"))
		b.Act(t, there.ID, experiment.ActionStart)
		there = b.Get(t, there.ID)
		back := created(t, redirectTest("Back", "/pages/b", "/pages/a"))
		refused(t, back, experiment.ActionStart, there, "where visitors of /pages/a go")
		same := created(t, redirectTest("Same page", "/pages/a", "/pages/c"))
		refused(t, same, experiment.ActionStart, there, "where visitors of /pages/a go")
		chain := created(t, redirectTest("Chain", "/pages/b", "/pages/c"))
		refused(t, chain, experiment.ActionStart, there, "where visitors of /pages/b go")
		apart := created(t, redirectTest("Apart", "/pages/d", "/pages/e"))
		b.Act(t, apart.ID, experiment.ActionStart)
	})
	t.Run("ResumeOfATestFromBeforeTheRule", func(t *testing.T) {
		// Two live tests of one product, as a shop may have from before
		// this rule: the paused one cannot resume while the other runs.
		older := created(t, PriceTest("Older"))
		b.Act(t, older.ID, experiment.ActionStart)
		b.Act(t, older.ID, experiment.ActionPause)
		newer := created(t, PriceTest("Newer"))
		forceStatus(t, b, newer.ID, experiment.StatusActive)
		refused(t, b.Get(t, older.ID), experiment.ActionResume, b.Get(t, newer.ID), "the price of product "+Tee)
	})
	t.Run("ConcurrentStartsOneWins", func(t *testing.T) {
		// Without the launch lock both units read no live test while the
		// other prepares its launch, and both start (seen on the store with
		// LiveTests' lock taken out).
		b.Platform.Slow(50 * time.Millisecond)
		defer b.Platform.Slow(0)
		for round := range 3 {
			x, y := created(t, PriceTest(fmt.Sprint("X", round))), created(t, PriceTest(fmt.Sprint("Y", round)))
			errs := make([]error, 2)
			var wg sync.WaitGroup
			for i, id := range []int64{x.ID, y.ID} {
				wg.Go(func() { _, errs[i] = b.act(id, experiment.ActionStart) })
			}
			wg.Wait()
			live := 0
			for i, id := range []int64{x.ID, y.ID} {
				if errs[i] == nil {
					live++
				} else {
					WantCode(t, errs[i], experiment.KindValidation, "launch_blocked")
				}
				if s := b.Get(t, id).Status; s == experiment.StatusActive {
					b.Act(t, id, experiment.ActionEnd)
				}
			}
			if live != 1 {
				t.Fatalf("round %d: %d of two contested starts succeeded, want 1", round, live)
			}
		}
	})
	t.Run("ScheduledStartIsRecordedFailed", func(t *testing.T) {
		holder := created(t, PriceTest("Holder"))
		b.Act(t, holder.ID, experiment.ActionStart)
		start := b.Clock.Now().Add(time.Hour)
		later := created(t, Scheduled(PriceTest("Later"), start, nil))
		b.Clock.Set(start)
		defer b.Clock.Set(Epoch)
		if err := b.Service.RunScheduled(ctx, b.Shop.ID, later.ID, experiment.ActionStart); err != nil {
			t.Fatal(err)
		}
		got := b.Get(t, later.ID)
		want := fmt.Sprintf("The scheduled start was refused: Test %d (%q, active) already changes the price of product %s", holder.ID, holder.Name, Tee)
		if got.Status != experiment.StatusFailed || !strings.HasPrefix(got.FailureReason, want) {
			t.Fatalf("contested scheduled start = %s %q", got.Status, got.FailureReason)
		}
	})
}

// forceStatus writes a status the service would not reach, through the
// repository's own unit of work.
func forceStatus(t *testing.T, b *Bundle, id int64, s experiment.Status) {
	t.Helper()
	_, err := b.Repo.Write(b.Ctx(), experiment.WriteMeta{ShopID: b.Shop.ID, Action: "test.force_status", ResourceType: "experiment"},
		func(ctx context.Context, tx experiment.Tx) (experiment.WriteResult, error) {
			x, err := tx.FindTestForUpdate(ctx, b.Shop.ID, id)
			if err != nil {
				return experiment.WriteResult{}, err
			}
			x.Status = s
			return experiment.WriteResult{}, tx.SaveTest(ctx, x)
		})
	if err != nil {
		t.Fatal(err)
	}
}
