package v1

import (
	"net/url"
	"testing"
	"time"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/experiment"
)

// FuzzListQuery is GET /v1/experiments' query string as parseFilter and
// parseInclude read it: refusals are 4xx, and an accepted filter is within
// the documented limit.
func FuzzListQuery(f *testing.F) {
	for _, s := range []string{
		"limit=10&status=draft,active&type=price&scheduled=true&created_at[gte]=2026-01-31T00:00:00Z&include=results_summary",
		"limit=1099511627776", "limit=-1", "limit=0x10", "cursor=%FF", "cursor=YzEuMS4x", "cursor=" + encodeCursor(experiment.Cursor{CreatedAt: time.Unix(1780308000, 0), ID: 2}),
		"status=%00", "type=,", "scheduled=TRUE", "created_at[lt]=2026-13-01T00:00:00Z", "include=", "include=%FF",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return // net/url refuses it before any handler
		}
		fl, err := parseFilter(q.Get, q.Has)
		if err == nil {
			_, err = parseInclude(q.Get("include"), q.Has("include"))
		}
		if err != nil {
			if s := api.StatusOf(err); s < 400 || s >= 500 {
				t.Fatalf("refused with %d: %v", s, err)
			}
			return
		}
		if fl.Limit < 1 || fl.Limit > 100 || fl.After != nil && fl.After.ID <= 0 {
			t.Fatalf("accepted a filter out of bounds: %+v", fl)
		}
	})
}
