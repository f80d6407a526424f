package platform

import (
	"context"
	"errors"
	"math"
	"strings"

	"github.com/liftab/lift/experiment"
)

// The shop's delivery zones, as its general (default) delivery profile
// has them: the zones a shipping test may name, the rates Lift quotes for
// them (shipping_rates.go in experiment) and whether Lift's carrier
// service takes part in each. Products in a merchant-made profile ship by
// that profile's own zones, which Lift does not read (docs/install.md,
// "Shipping rates").
const (
	// deliveryProfilesQuery finds the default profile and its location
	// groups: 2 + 1 + 50 × 3 = 153 points.
	deliveryProfilesQuery = `query DeliveryProfiles($after: String) {
  deliveryProfiles(first: 50, after: $after) {
    pageInfo { hasNextPage endCursor }
    nodes { id default profileLocationGroups { locationGroup { id } } }
  }
}`
	// deliveryZonesQuery reads a page of a location group's zones, each with
	// its first 25 shipping methods and their conditions (a zone has a
	// handful; more are not read): 2 + 1 + 6 × (1 + 3 + 2 + 25 × 6) + 2 =
	// 941 points, under the platform's 1,000.
	deliveryZonesQuery = `query DeliveryZones($profile: ID!, $group: ID!, $after: String) {
  deliveryProfile(id: $profile) {
    profileLocationGroups(locationGroupId: $group) {
      locationGroupZones(first: 6, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          zone { id name countries { code { countryCode restOfWorld } } }
          methodDefinitions(first: 25) {
            nodes {
              id name active
              rateProvider {
                ... on DeliveryRateDefinition { price { amount } }
                ... on DeliveryParticipant { carrierService { callbackUrl } }
              }
              methodConditions {
                field operator
                conditionCriteria { ... on MoneyV2 { amount } ... on Weight { unit value } }
              }
            }
          }
        }
      }
    }
  }
}`
	// zoneCarriersQuery is the launch's check: each zone's carrier
	// methods only (type: PARTICIPANT), 20 zones a page: 2 + 1 + 20 × (1 +
	// 1 + 2 + 5 × 3) + 2 = 385 points, so a start does not wait on the
	// platform's cost bucket as the catalog read's 941 might.
	zoneCarriersQuery = `query DeliveryZoneCarriers($profile: ID!, $group: ID!, $after: String) {
  deliveryProfile(id: $profile) {
    profileLocationGroups(locationGroupId: $group) {
      locationGroupZones(first: 20, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          zone { id name }
          methodDefinitions(first: 5, type: PARTICIPANT) {
            nodes { id active rateProvider { ... on DeliveryParticipant { carrierService { callbackUrl } } } }
          }
        }
      }
    }
  }
}`
	// OpDeliveryProfiles, OpDeliveryZones and OpZoneCarriers name the
	// reads, for Fail.
	OpDeliveryProfiles = "DeliveryProfiles"
	OpDeliveryZones    = "DeliveryZones"
	OpZoneCarriers     = "DeliveryZoneCarriers"
)

// deliveryMethod is a zone's shipping method: a flat rate (Price set) or
// a carrier service's rates (CarrierService set).
type deliveryMethod struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Active       bool   `json:"active"`
	RateProvider struct {
		Price *struct {
			Amount string `json:"amount"`
		} `json:"price"`
		CarrierService *struct {
			CallbackURL string `json:"callbackUrl"`
		} `json:"carrierService"`
	} `json:"rateProvider"`
	MethodConditions []struct {
		Field    string `json:"field"`    // TOTAL_PRICE or TOTAL_WEIGHT
		Operator string `json:"operator"` // GREATER_THAN_OR_EQUAL_TO or LESS_THAN_OR_EQUAL_TO
		Criteria struct {
			Amount string  `json:"amount"`
			Unit   string  `json:"unit"`
			Value  float64 `json:"value"`
		} `json:"conditionCriteria"`
	} `json:"methodConditions"`
}

// gramsPer converts the platform's weight units.
var gramsPer = map[string]float64{"GRAMS": 1, "KILOGRAMS": 1000, "OUNCES": 28.349523125, "POUNDS": 453.59237}

// grams is a weight bound in grams; a unit Lift does not know, or a value
// no cart weighs (negative, not a number, beyond any parcel), is no bound.
func grams(value float64, unit string) int64 {
	g := math.Round(value * gramsPer[unit])
	if !(g > 0 && g < 1e12) {
		return 0
	}
	return int64(g)
}

// rate is a flat-rate method as the mirror keeps it, with the cart bounds
// its conditions set.
func (m deliveryMethod) rate() experiment.ZoneRate {
	r := experiment.ZoneRate{ID: m.ID, Name: m.Name, Price: m.RateProvider.Price.Amount}
	for _, c := range m.MethodConditions {
		atLeast := c.Operator == "GREATER_THAN_OR_EQUAL_TO"
		switch c.Field {
		case "TOTAL_PRICE":
			if atLeast {
				r.MinSubtotal = c.Criteria.Amount
			} else {
				r.MaxSubtotal = c.Criteria.Amount
			}
		case "TOTAL_WEIGHT":
			g := grams(c.Criteria.Value, c.Criteria.Unit)
			if atLeast {
				r.MinGrams = g
			} else {
				r.MaxGrams = g
			}
		}
	}
	return r
}

// zoneNode is a zone of a location group with its shipping methods.
type zoneNode struct {
	Zone struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		Countries []struct {
			Code struct {
				CountryCode string `json:"countryCode"`
				RestOfWorld bool   `json:"restOfWorld"`
			} `json:"code"`
		} `json:"countries"`
	} `json:"zone"`
	MethodDefinitions struct {
		Nodes []deliveryMethod `json:"nodes"`
	} `json:"methodDefinitions"`
}

type zonePage struct {
	DeliveryProfile *struct {
		ProfileLocationGroups []struct {
			LocationGroupZones struct {
				PageInfo pageInfo   `json:"pageInfo"`
				Nodes    []zoneNode `json:"nodes"`
			} `json:"locationGroupZones"`
		} `json:"profileLocationGroups"`
	} `json:"deliveryProfile"`
}

// fetchZones reads the default profile's zones into snap.DeliveryZones.
// A shop without a default profile (the platform always has one), or
// whose grant lacks read_shipping, leaves it nil: not read.
func (c *Client) fetchZones(ctx context.Context, domain, token string, snap *experiment.CatalogSnapshot) error {
	zones, err := c.readZones(ctx, domain, token, OpDeliveryZones, deliveryZonesQuery)
	snap.DeliveryZones = zones
	return err
}

// readZones reads the default profile's zones with query (op names it),
// every page of every location group; nil (no error) when the shop has no
// default profile or its grant lacks read_shipping.
func (c *Client) readZones(ctx context.Context, domain, token, op, query string) ([]experiment.Zone, error) {
	profile, groups, err := c.defaultProfile(ctx, domain, token)
	if notGranted(err) {
		return nil, nil
	}
	if err != nil || profile == "" {
		return nil, err
	}
	out := []experiment.Zone{}
	for _, group := range groups {
		var after any
		for {
			var page zonePage
			err := c.graphQL(ctx, domain, token, op, query, map[string]any{"profile": profile, "group": group, "after": after}, &page)
			if notGranted(err) {
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			if page.DeliveryProfile == nil || len(page.DeliveryProfile.ProfileLocationGroups) == 0 {
				break // removed while we read
			}
			zones := page.DeliveryProfile.ProfileLocationGroups[0].LocationGroupZones
			for _, n := range zones.Nodes {
				out = append(out, c.zone(n))
			}
			next, more := zones.PageInfo.next()
			if !more {
				break
			}
			after = next
		}
	}
	return out, nil
}

// zone is a zone as the mirror keeps it.
func (c *Client) zone(n zoneNode) experiment.Zone {
	z := experiment.Zone{ID: n.Zone.ID, Name: n.Zone.Name, Countries: []string{}}
	for _, co := range n.Zone.Countries {
		switch {
		case co.Code.RestOfWorld: // every country no other zone lists
			z.RestOfWorld = true
		case co.Code.CountryCode != "":
			z.Countries = append(z.Countries, strings.ToUpper(co.Code.CountryCode))
		}
	}
	z.LiftRates, z.Rates = c.zoneRates(n.MethodDefinitions.Nodes)
	return z
}

// notGranted: the shop's grant lacks the read's scope (an install made
// before Lift asked for it). The read then says nothing, so a refresh
// keeps the mirror's, rather than failing the whole catalog read; a
// reinstall through /api/auth grants the app's scopes of today.
func notGranted(err error) bool {
	var pe *Error
	return errors.As(err, &pe) && pe.Code == "ACCESS_DENIED"
}

// zoneRates says whether Lift's carrier service is an active method of the
// zone, and which flat rates are the zone's own: the active ones, or,
// where Lift's rates serve the zone, every one, since a merchant hands a
// zone to Lift by turning its own rates off, and those are what Lift
// quotes the control group (QuoteRates).
func (c *Client) zoneRates(methods []deliveryMethod) (bool, []experiment.ZoneRate) {
	lift := false
	for _, m := range methods {
		if cs := m.RateProvider.CarrierService; m.Active && cs != nil && c.RatesURL != "" && cs.CallbackURL == c.RatesURL {
			lift = true
		}
	}
	rates := []experiment.ZoneRate{}
	for _, m := range methods {
		if m.RateProvider.Price != nil && (m.Active || lift) {
			rates = append(rates, m.rate())
		}
	}
	return lift, rates
}

// defaultProfile is the id of the shop's default delivery profile and its
// location groups.
func (c *Client) defaultProfile(ctx context.Context, domain, token string) (string, []string, error) {
	var after any
	for {
		var page struct {
			DeliveryProfiles struct {
				PageInfo pageInfo `json:"pageInfo"`
				Nodes    []struct {
					ID                    string `json:"id"`
					Default               bool   `json:"default"`
					ProfileLocationGroups []struct {
						LocationGroup struct {
							ID string `json:"id"`
						} `json:"locationGroup"`
					} `json:"profileLocationGroups"`
				} `json:"nodes"`
			} `json:"deliveryProfiles"`
		}
		if err := c.graphQL(ctx, domain, token, OpDeliveryProfiles, deliveryProfilesQuery, map[string]any{"after": after}, &page); err != nil {
			return "", nil, err
		}
		for _, p := range page.DeliveryProfiles.Nodes {
			if !p.Default {
				continue
			}
			var groups []string
			for _, g := range p.ProfileLocationGroups {
				groups = append(groups, g.LocationGroup.ID)
			}
			return p.ID, groups, nil
		}
		next, more := page.DeliveryProfiles.PageInfo.next()
		if !more {
			return "", nil, nil
		}
		after = next
	}
}

// DeliveryZones implements experiment.Platform: the default profile's
// zones read live with zoneCarriersQuery, each saying whether it offers
// Lift rates (no rates); nil when the grant cannot read them.
func (c *Client) DeliveryZones(ctx context.Context, shop *experiment.Shop) ([]experiment.Zone, error) {
	token, err := c.tokenFor(ctx, shop)
	if err != nil {
		return nil, err
	}
	zones, err := c.readZones(ctx, shop.Domain, token, OpZoneCarriers, zoneCarriersQuery)
	return zones, renamed(err, "read the delivery zones")
}
