package jobs_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/liftab/lift/jobs"
)

// TestHousekeepingSource: one purge job per hour slot, its id naming the
// slot; the ticks in between give none once the scheduler has it in hand,
// and give it again while it has not (an enqueue failed).
func TestHousekeepingSource(t *testing.T) {
	src := jobs.HousekeepingSource()
	at := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		now    time.Time
		want   string
		inHand bool // the scheduler queued what this tick gave
	}{
		{at, "housekeeping:" + slot(at), false},
		{at.Add(15 * time.Second), "housekeeping:" + slot(at), true},
		{at.Add(30 * time.Second), "", false},
		{at.Add(59 * time.Minute), "", false},
		{at.Add(time.Hour), "housekeeping:" + slot(at.Add(time.Hour)), true},
		{at.Add(time.Hour + time.Minute), "", false},
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
		case tc.inHand:
			got[0].InHand()
		}
	}
}

func slot(t time.Time) string {
	return strconv.FormatInt(t.Unix()/int64(jobs.HousekeepingEvery/time.Second)+1, 10)
}
