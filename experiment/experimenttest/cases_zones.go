package experimenttest

import (
	"slices"
	"strings"
	"testing"

	"github.com/liftab/lift/experiment"
)

// testZoneWarning: a shipping test saved over a zone that does not offer
// Lift rates is warned, the warning stands on the test for both APIs'
// reads, and a catalog recheck is queued; the save after the zone offers
// them lifts it; a copy made while the zone does not is flagged too; a
// start is refused while the platform's zone does not offer them.
func testZoneWarning(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	b.SetLiftRates(t, b.Shop, Domestic, false)
	out, err := b.Service.Create(b.Ctx(), b.Shop, []byte(TypeBodies()[experiment.TypeShipping]), JSONReply(201))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Warnings) != 1 || out.Warnings[0].Code != experiment.WarnZoneWithoutLiftRates {
		t.Fatalf("create warnings = %+v", out.Warnings)
	}
	standing := func(id int64) []experiment.Finding {
		t.Helper()
		w, err := b.Warnings.FindTestWarnings(b.Ctx(), b.Shop.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	if w := standing(out.Test.ID); len(w) != 1 || w[0].Code != experiment.WarnZoneWithoutLiftRates || w[0].Param != "shared.shipping.zone_ids[0]" ||
		w[0].Severity != experiment.SeverityWarning {
		t.Fatalf("standing warnings after the create = %+v", w)
	}
	if got := b.Queue.Refreshes(); len(got) != 1 || got[0] != b.Shop.ID {
		t.Fatalf("catalog rechecks queued = %v", got)
	}

	b.SetLiftRates(t, b.Shop, Domestic, true)
	up, err := b.Service.Update(b.Ctx(), b.Shop, out.Test.ID, []byte(`{"name":"Saved again"}`), JSONReply(200))
	if err != nil {
		t.Fatal(err)
	}
	if len(up.Warnings) != 0 || len(standing(out.Test.ID)) != 0 {
		t.Fatalf("after the zone offers Lift rates: save warnings %+v, standing %+v", up.Warnings, standing(out.Test.ID))
	}

	// A copy is made without validation; it is judged against the zones
	// all the same.
	b.SetLiftRates(t, b.Shop, Domestic, false)
	dup, err := b.Service.Duplicate(b.Ctx(), b.Shop, out.Test.ID, JSONReply(201))
	if err != nil {
		t.Fatal(err)
	}
	if w := standing(dup.Test.ID); len(w) != 1 || w[0].Code != experiment.WarnZoneWithoutLiftRates {
		t.Fatalf("standing warnings of the copy = %+v", w)
	}

	// A launch judges the zones the platform has now, not the mirror's:
	// refused while the zone does not offer Lift rates, nothing changed.
	b.Platform.SetZones([]experiment.Zone{{ID: Domestic, Name: "Domestic"}, {ID: Intl, Name: "International", LiftRates: true}})
	_, err = b.act(out.Test.ID, experiment.ActionStart)
	if e, _ := experiment.AsError(err); e == nil || e.Code != "launch_blocked" || e.Kind != experiment.KindValidation ||
		!strings.Contains(e.Message, "Zone Domestic ("+Domestic+") does not offer Lift rates") {
		t.Fatalf("start over a zone without Lift rates = %v", err)
	}
	if got := b.Get(t, out.Test.ID).Status; got != experiment.StatusDraft || slices.Contains(b.Platform.Launches(), out.Test.ID) {
		t.Fatalf("a refused start left the test %s (launches %v)", got, b.Platform.Launches())
	}
	b.Platform.SetZones([]experiment.Zone{{ID: Domestic, Name: "Domestic", LiftRates: true}, {ID: Intl, Name: "International", LiftRates: true}})
	if got := b.Act(t, out.Test.ID, experiment.ActionStart).Test.Status; got != experiment.StatusActive {
		t.Fatalf("start once the zone offers Lift rates: %s", got)
	}
}
