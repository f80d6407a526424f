package experiment

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// A shipping test measures something only while the platform asks Lift
// for its zones' rates. A save whose zone does not offer them leaves a
// standing warning on the test (standZones); a catalog refresh reads
// whether each zone offers Lift rates (and still exists), so it raises the
// warning on any test not ended one of whose zones does not, and lifts it
// once every zone does; both APIs' reads of the test show it
// (warnings.go), as they show THEMES_PUBLISH's.

// standZones makes a save's zone finding stand on the test, so both APIs'
// reads show it (the admin panel's create answers "success" alone), or
// lifts it when the saved test's zones all offer Lift rates. warnings are
// the save's validation findings over the whole test.
func standZones(ctx context.Context, tx Tx, t *Test, warnings []Finding) error {
	if decoded(t).shipping == nil {
		return nil
	}
	if i := slices.IndexFunc(warnings, func(f Finding) bool { return f.Code == WarnZoneWithoutLiftRates }); i >= 0 {
		return tx.SetTestWarning(ctx, t.ShopID, t.ID, warnings[i])
	}
	return tx.ClearTestWarning(ctx, t.ID, WarnZoneWithoutLiftRates)
}

// judgeZones raises or lifts the standing warning on t against the
// mirror's zones, for a new test made without validation (Duplicate).
func judgeZones(ctx context.Context, tx Tx, t *Test) error {
	v := decoded(t)
	if v.shipping == nil {
		return nil
	}
	view, err := tx.Catalog().Lookup(ctx, t.ShopID, CatalogRefs{Zones: v.shipping.ZoneIDs})
	if err != nil {
		return err
	}
	if w, ok := zoneWarning(v.shipping.ZoneIDs, view.Zones); ok {
		return tx.SetTestWarning(ctx, t.ShopID, t.ID, w)
	}
	return tx.ClearTestWarning(ctx, t.ID, WarnZoneWithoutLiftRates)
}

// zoneWarningTx is what flagZones needs of the refresh's unit of work.
type zoneWarningTx interface {
	FindOpenTests(ctx context.Context, shopID int64) ([]*Test, error)
	SetTestWarning(ctx context.Context, shopID, testID int64, w Finding) error
	ClearTestWarning(ctx context.Context, testID int64, code string) error
}

// WarnZoneWithoutLiftRates is the code of the create-time finding and of
// the standing warning.
const WarnZoneWithoutLiftRates = "zone_without_lift_rates"

// flagZones raises or lifts the warning on each test not ended with a
// shipping part, against the zones of c; it returns how many it flagged.
func flagZones(ctx context.Context, tx zoneWarningTx, shopID int64, c *CatalogSnapshot) (int, error) {
	live, err := tx.FindOpenTests(ctx, shopID)
	if err != nil {
		return 0, err
	}
	zones := map[string]Zone{}
	for _, z := range c.DeliveryZones {
		zones[z.ID] = z
	}
	flagged := 0
	for _, t := range live {
		v := decoded(t)
		if v.shipping == nil {
			continue
		}
		if w, ok := zoneWarning(v.shipping.ZoneIDs, zones); ok {
			flagged++
			err = tx.SetTestWarning(ctx, shopID, t.ID, w)
		} else {
			err = tx.ClearTestWarning(ctx, t.ID, WarnZoneWithoutLiftRates)
		}
		if err != nil {
			return 0, err
		}
	}
	return flagged, nil
}

// zoneWarning is the standing warning for the zones of ids that are gone
// or do not offer Lift rates, if any.
func zoneWarning(ids []string, zones map[string]Zone) (Finding, bool) {
	var why []string
	param := ""
	for i, id := range ids {
		z, ok := zones[id]
		switch {
		case !ok:
			why = append(why, fmt.Sprintf("Zone %s is no longer one of the shop's delivery zones.", id))
		case !z.LiftRates:
			why = append(why, fmt.Sprintf("Zone %s (%s) does not offer Lift rates.", z.Name, id))
		default:
			continue
		}
		if param == "" {
			param = fmt.Sprintf("shared.shipping.zone_ids[%d]", i)
		}
	}
	if len(why) == 0 {
		return Finding{}, false
	}
	return Finding{Severity: SeverityWarning, Code: WarnZoneWithoutLiftRates, Param: param, Message: strings.Join(why, " ") +
		" Buyers there see the zone's own rates in every group, so the test measures nothing there; add Lift rates to the zone in the shop's shipping settings (in place of its own rates), or end the test."}, true
}
