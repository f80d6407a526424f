package experiment

import (
	"encoding/json"
	"slices"
)

// Step is where the contract's feature-availability table checks a shop.
type Step string

const (
	StepCreate  Step = "create"
	StepUpdate  Step = "update"
	StepPreview Step = "preview"
	StepStart   Step = "start"
	StepResume  Step = "resume"
)

// StepOf maps a lifecycle action to its entitlement step; pause, end and
// archive have none, so they are never checked (part 3 rule 3).
func StepOf(a Action) (Step, bool) {
	switch a {
	case ActionStart:
		return StepStart, true
	case ActionResume:
		return StepResume, true
	case ActionPreview:
		return StepPreview, true
	}
	return "", false
}

// Feature slugs a test type needs from the shop's plan.
const (
	FeaturePrice          = "price"
	FeatureOffer          = "offer"
	FeatureMultiMarket    = "multi_market"
	FeatureCheckoutBlocks = "checkout_blocks"
	FeatureCarrierService = "carrier_service"
)

// CheckEntitlements answers 403 when the shop's plan does not let it do step
// with t, exactly where part 5's table applies each code.
func CheckEntitlements(shop *Shop, t *Test, step Step) error {
	billing := step == StepCreate || step == StepStart || step == StepResume
	if billing && !shop.SubscriptionActive {
		return Errorf(KindForbidden, "subscription_inactive", "This shop's subscription is inactive; renew it to continue.")
	}
	if billing && shop.BillingCapReached {
		return Errorf(KindForbidden, "billing_cap_reached", "This shop reached its usage cap for the period; raise the cap to continue.")
	}
	// The contract does not name a code for an exhausted annual allowance; the
	// 403 set is fixed, so it is billing_cap_reached with the condition named.
	if (step == StepStart || step == StepResume) && shop.AnnualBilling && shop.AllowanceExhausted {
		return Errorf(KindForbidden, "billing_cap_reached",
			"This month's included, banked and purchased orders are used up; add usage, upgrade, or wait for the month to roll over.").
			WithDetails(map[string]any{"condition": "allowance_exhausted"})
	}
	for _, f := range RequiredFeatures(t) {
		if !shop.HasFeature(f) {
			return Errorf(KindForbidden, "feature_not_in_plan", "This shop's plan does not include %s tests; upgrade to use them.", f).
				WithParam(f)
		}
	}
	if billing && slices.Contains(t.BundledTypes(), TypeShipping) && !CarrierCalculated(shop) {
		return Errorf(KindForbidden, "carrier_service_required",
			"Shipping tests need carrier-calculated shipping: a plan with it, an existing carrier service, or annual billing.")
	}
	return nil
}

// CarrierCalculated reports whether the shop can show carrier-calculated rates.
func CarrierCalculated(shop *Shop) bool {
	return shop.HasFeature(FeatureCarrierService) || shop.CarrierService || shop.AnnualBilling
}

// RequiredFeatures lists the plan features t needs, in a stable order. A
// key a combined test cannot bundle needs none: validation refuses it, and
// asking for a feature first would send the merchant to upgrade for a test
// no plan can make valid (v1 audit 2 V9).
func RequiredFeatures(t *Test) []string {
	var out []string
	for _, k := range t.BundledTypes() {
		if t.Type == TypeCombined && !bundleable(k) {
			continue
		}
		switch k {
		case TypePrice:
			out = append(out, FeaturePrice)
			var p struct {
				Markets []json.RawMessage `json:"markets"`
			}
			if json.Unmarshal(t.Shared[string(TypePrice)], &p) == nil && len(p.Markets) > 0 {
				out = append(out, FeatureMultiMarket)
			}
		case TypeOffer:
			out = append(out, FeatureOffer)
		case TypeCheckout:
			out = append(out, FeatureCheckoutBlocks)
		}
	}
	return out
}
