package experiment

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// A shipping test measures something only while the platform asks Lift
// for its zones' rates. One rule (zoneWarning) judges a test's zones
// wherever they are read: a save warns and leaves the warning standing on
// the test (validate_content.go, standZones); a catalog refresh raises or
// lifts it on every test not ended (flagZones); a copy is judged at once
// (judgeZones); and a launch, reading the zones live, is refused
// (zonesOffered). Both APIs' reads of a test show the standing warning
// (warnings.go), as they show THEMES_PUBLISH's.

// judgeZones raises or lifts the standing warning on t, a test just saved
// or copied, against the mirror's zones, so both APIs' reads show it (the
// admin panel's create answers "success" alone).
func judgeZones(ctx context.Context, tx Tx, t *Test) error {
	v := decoded(t)
	if v.shipping == nil {
		return nil
	}
	view, err := tx.Catalog().Lookup(ctx, t.ShopID, CatalogRefs{Zones: v.shipping.ZoneIDs})
	if err != nil {
		return err
	}
	_, err = standZoneWarning(ctx, tx, t.ShopID, t.ID, v.shipping.ZoneIDs, view.Zones)
	return err
}

// standZoneWarning sets the test's standing warning when zoneWarning has
// one for ids over zones, and lifts it otherwise; it says which it did.
func standZoneWarning(ctx context.Context, tx warningWriter, shopID, testID int64, ids []string, zones map[string]Zone) (bool, error) {
	if w, ok := zoneWarning(ids, zones); ok {
		return true, tx.SetTestWarning(ctx, shopID, testID, w)
	}
	return false, tx.ClearTestWarning(ctx, testID, WarnZoneWithoutLiftRates)
}

// warningWriter raises and lifts standing warnings (Tx and InstallTx).
type warningWriter interface {
	SetTestWarning(ctx context.Context, shopID, testID int64, w Finding) error
	ClearTestWarning(ctx context.Context, testID int64, code string) error
}

// recheckZones queues a catalog refresh when a save was warned that a
// zone does not offer Lift rates: the merchant who reads the warning and
// fixes the zone sees it gone on the next save minutes later, not the next
// day. A queue that cannot take it only delays that (logged).
func (s *Service) recheckZones(ctx context.Context, shopID int64, warnings []Finding) {
	if s.queue == nil || !slices.ContainsFunc(warnings, func(f Finding) bool { return f.Code == WarnZoneWithoutLiftRates }) {
		return
	}
	if err := s.queue.EnqueueCatalogRefresh(ctx, shopID); err != nil {
		s.log.WarnContext(ctx, "catalog recheck not enqueued", "shop_id", shopID, "err", err)
	}
}

// zoneWarningTx is what flagZones needs of the refresh's unit of work.
type zoneWarningTx interface {
	FindOpenTests(ctx context.Context, shopID int64) ([]*Test, error)
	warningWriter
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
		raised, err := standZoneWarning(ctx, tx, shopID, t.ID, v.shipping.ZoneIDs, zones)
		if err != nil {
			return 0, err
		}
		if raised {
			flagged++
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
			why = append(why, fmt.Sprintf("Zone %s is not one of the shop's delivery zones.", id))
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
		" Buyers there see the zone's own rates in every group, so the test measures nothing there: in the shop's shipping settings, add Lift rates to the zone in place of its own rates (Lift quotes those to the control group)."}, true
}

// zonesOffered refuses the launch of a test one of whose shipping zones
// does not offer Lift rates on the platform now, or is not the shop's
// (launch_blocked, nothing changed): every group would see the zone's own
// rates. A grant that cannot read zones skips the check.
func (s *Service) zonesOffered(ctx context.Context, shop *Shop, t *Test) error {
	v := decoded(t)
	if v.shipping == nil {
		return nil
	}
	read, err := s.platform.DeliveryZones(ctx, shop)
	if err != nil || read == nil {
		return err
	}
	zones := make(map[string]Zone, len(read))
	for _, z := range read {
		zones[z.ID] = z
	}
	if w, ok := zoneWarning(v.shipping.ZoneIDs, zones); ok {
		return Refuse("launch_blocked", "", "%s The test was not launched; start it again once it does.", w.Message)
	}
	return nil
}
