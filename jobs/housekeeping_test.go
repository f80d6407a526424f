package jobs_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/liftab/lift/jobs"
)

// TestHousekeepingSource: one purge job per hour slot, its id naming the
// slot; the ticks in between give none.
func TestHousekeepingSource(t *testing.T) {
	src := jobs.HousekeepingSource()
	at := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		now  time.Time
		want string
	}{
		{at, "housekeeping:" + slot(at)},
		{at.Add(15 * time.Second), ""},
		{at.Add(59 * time.Minute), ""},
		{at.Add(time.Hour), "housekeeping:" + slot(at.Add(time.Hour))},
		{at.Add(time.Hour + time.Minute), ""},
	} {
		got, err := src(context.Background(), tc.now)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%s: jobs %+v, want none", tc.now, got)
		case tc.want != "" && (len(got) != 1 || got[0].ID != tc.want || got[0].Type != jobs.TypeHousekeeping):
			t.Errorf("%s: jobs %+v, want %s", tc.now, got, tc.want)
		}
	}
}

func slot(t time.Time) string {
	return strconv.FormatInt(t.Unix()/int64(jobs.HousekeepingEvery/time.Second), 10)
}
