package experiment

import (
	"encoding/json"
	"regexp"
	"slices"
)

// audienceDevices are the device types the tracker tells apart (bots are
// never in a test).
var audienceDevices = []string{"desktop", "mobile", "tablet"}

var audienceCountry = regexp.MustCompile(`^[A-Z]{2}$`)

// audienceKeys are the targeting keys the storefront applies.
var audienceKeys = []string{"countries", "devices", "visitor_type"}

// MaxAudienceBytes bounds a test's audience object (as stored JSON). The
// storefront config carries it to every visitor; an 8 MB one made the
// shop's config 8 MB (v1 audit 2, V1). Every country code, device and
// visitor type together fit in under 1.5 KB.
const MaxAudienceBytes = 8 << 10

// audience checks the targeting keys the storefront tracker applies:
// countries, devices and visitor_type. The tracker reads them as they are
// saved, so a value of another shape would target everyone (a number of
// countries has no length) or match by substring (a string) without a
// word; the fuzz audit saved both. Other keys are kept as the merchant
// wrote them (the contract leaves audience fields open), with a warning,
// since they target nobody: "country" for "countries" targeted everyone
// without a word (v1 audit 2, V1). The whole object goes to every
// storefront visitor with the config, so it has a size bound.
func (v *validator) audience() {
	a := v.t.Audience
	if len(a) == 0 || string(a) == "null" {
		return
	}
	if len(a) > MaxAudienceBytes {
		v.fail("invalid_request", "audience", "audience is %d bytes; it is sent to every storefront visitor and may hold at most %d.", len(a), MaxAudienceBytes)
		return
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(a, &keys) != nil {
		v.fail("invalid_request", "audience", "audience is an object or null.")
		return
	}
	var other []string
	for k := range keys {
		if !slices.Contains(audienceKeys, k) {
			other = append(other, k)
		}
	}
	slices.Sort(other)
	for _, k := range other {
		v.warn("audience_key_ignored", "audience."+k,
			"audience.%s is kept but targets nobody: the storefront applies %q.", k, audienceKeys)
	}
	list := func(key string) ([]string, bool) {
		raw, ok := keys[key]
		if !ok || string(raw) == "null" {
			return nil, true
		}
		var out []string
		return out, json.Unmarshal(raw, &out) == nil
	}
	countries, ok := list("countries")
	if !ok {
		v.fail("invalid_request", "audience.countries", "audience.countries is a list of two-letter country codes such as [\"US\", \"CA\"].")
	}
	for i, c := range countries {
		if !audienceCountry.MatchString(c) {
			v.fail("invalid_request", "audience.countries", "audience.countries[%d] is %q; country codes are two capital letters such as \"US\".", i, c)
			break
		}
	}
	devices, ok := list("devices")
	if !ok {
		v.fail("invalid_request", "audience.devices", "audience.devices is a list of %q.", audienceDevices)
	}
	for i, d := range devices {
		if !slices.Contains(audienceDevices, d) {
			v.fail("invalid_request", "audience.devices", "audience.devices[%d] is %q; devices are %q.", i, d, audienceDevices)
			break
		}
	}
	if raw, ok := keys["visitor_type"]; ok && string(raw) != "null" {
		var vt string
		if json.Unmarshal(raw, &vt) != nil || (vt != "new" && vt != "returning") {
			v.fail("invalid_request", "audience.visitor_type", "audience.visitor_type is \"new\" or \"returning\"; leave it out for both.")
		}
	}
}
