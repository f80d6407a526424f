package experiment

import (
	"strings"
	"testing"
)

// TestZoneWarning: a shipping test is flagged for the first of its
// zones that is gone or does not offer Lift rates, naming every such zone;
// a test whose zones all offer them is not.
func TestZoneWarning(t *testing.T) {
	t.Parallel()
	zones := map[string]Zone{"a": {ID: "a", Name: "Domestic", LiftRates: true}, "b": {ID: "b", Name: "Europe"}}
	for _, tc := range []struct {
		name  string
		ids   []string
		param string
		says  []string
	}{
		{"AllOffer", []string{"a"}, "", nil},
		{"OneDoesNot", []string{"a", "b"}, "shared.shipping.zone_ids[1]", []string{"Zone Europe (b) does not offer Lift rates."}},
		{"Gone", []string{"c", "b"}, "shared.shipping.zone_ids[0]",
			[]string{"Zone c is not one of the shop's delivery zones.", "Zone Europe (b) does not offer Lift rates."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, ok := zoneWarning(tc.ids, zones)
			if ok != (tc.param != "") || w.Param != tc.param {
				t.Fatalf("warning = %+v, %v", w, ok)
			}
			for _, s := range tc.says {
				if !strings.Contains(w.Message, s) || w.Code != WarnZoneWithoutLiftRates || w.Severity != SeverityWarning {
					t.Fatalf("warning %+v does not say %q", w, s)
				}
			}
		})
	}
}
