package session

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/liftab/lift/experiment"
)

// shipping tests rates in zones: zoneIds at the top, rates per variant
// group.
func shipping(_ context.Context, _ *API, shop *experiment.Shop, in *createWire) (map[string]any, error) {
	if err := only(in, "zoneIds"); err != nil {
		return nil, err
	}
	zones := []string{}
	for i, z := range in.ZoneIDs {
		id, err := gid("DeliveryZone", z, "zoneIds["+strconv.Itoa(i)+"]")
		if err != nil {
			return nil, err
		}
		zones = append(zones, id)
	}
	gs, err := groups(in, map[string]bool{"rates": true}, func(g groupWire) (map[string]any, error) {
		rates := []any{}
		for j, r := range g.Rates {
			zone, err := gid("DeliveryZone", r.ZoneID, "rates["+strconv.Itoa(j)+"].zoneId")
			if err != nil {
				return nil, err
			}
			rate := map[string]any{"zone_id": zone, "name": r.Name, "price": money(shop, r.Price)}
			if r.RateID != "" {
				if rate["rate_id"], err = gid("DeliveryMethodDefinition", r.RateID, "rates["+strconv.Itoa(j)+"].rateId"); err != nil {
					return nil, err
				}
			}
			rates = append(rates, rate)
		}
		return map[string]any{"rates": rates}, nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"type": "shipping", "shared": map[string]any{"shipping": map[string]any{"zone_ids": zones}}, "test_groups": gs}, nil
}

// redirect sends visitors of sourcePath to each variant group's
// destination.
func redirect(_ context.Context, _ *API, _ *experiment.Shop, in *createWire) (map[string]any, error) {
	if err := only(in, "sourcePath", "matchType"); err != nil {
		return nil, err
	}
	shared := map[string]any{}
	if in.SourcePath != nil {
		shared["source_path"] = *in.SourcePath
	}
	if in.MatchType != nil {
		shared["match_type"] = *in.MatchType
	}
	gs, err := groups(in, map[string]bool{"destination": true}, func(g groupWire) (map[string]any, error) {
		return map[string]any{"destination": g.Destination}, nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"type": "url_redirect", "shared": map[string]any{"url_redirect": shared}, "test_groups": gs}, nil
}

// template shows each variant group a template of the theme themeId.
func template(_ context.Context, _ *API, _ *experiment.Shop, in *createWire) (map[string]any, error) {
	if err := only(in, "themeId"); err != nil {
		return nil, err
	}
	shared := map[string]any{}
	if in.ThemeID != nil {
		id, err := gid("OnlineStoreTheme", *in.ThemeID, "themeId")
		if err != nil {
			return nil, err
		}
		shared["theme_id"] = id
	}
	gs, err := groups(in, map[string]bool{"template": true}, func(g groupWire) (map[string]any, error) {
		return map[string]any{"template": g.Template}, nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"type": "template", "shared": map[string]any{"template": shared}, "test_groups": gs}, nil
}

// theme shows each variant group another theme.
func theme(_ context.Context, _ *API, _ *experiment.Shop, in *createWire) (map[string]any, error) {
	if err := only(in); err != nil {
		return nil, err
	}
	gs, err := groups(in, map[string]bool{"themeId": true}, func(g groupWire) (map[string]any, error) {
		if g.ThemeID == "" {
			return map[string]any{}, nil
		}
		id, err := gid("OnlineStoreTheme", g.ThemeID, "testGroups.themeId")
		if err != nil {
			return nil, err
		}
		return map[string]any{"theme_id": id}, nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"type": "theme", "test_groups": gs}, nil
}

// checkout tests carry each variant group's checkout block settings as
// free JSON (checkout); the domain checks and stores them through
// CreateFromAdminPanel, the admin panel's own way in.
func checkout(_ context.Context, _ *API, _ *experiment.Shop, in *createWire) (map[string]any, error) {
	if err := only(in); err != nil {
		return nil, err
	}
	gs, err := groups(in, map[string]bool{"checkout": true}, func(g groupWire) (map[string]any, error) {
		if len(g.Checkout) == 0 {
			return map[string]any{}, nil
		}
		var blocks map[string]any
		if err := json.Unmarshal(g.Checkout, &blocks); err != nil {
			return nil, badRequest("testGroups.checkout is an object of checkout block settings.")
		}
		return blocks, nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"type": "checkout", "test_groups": gs}, nil
}
