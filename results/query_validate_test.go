package results

import (
	"strings"
	"testing"

	"github.com/liftab/lift/experiment"
)

// TestResultsNotAvailableSaysWhatComesNext: a failed (or draft) test gets
// results once started, so its refusal says how; "Do not retry" said the
// opposite (v1 audit 2, V13). An archived one will never have any.
func TestResultsNotAvailableSaysWhatComesNext(t *testing.T) {
	t.Parallel()
	for status, want := range map[experiment.Status]string{
		experiment.StatusFailed:   "until it is started (POST /v1/experiments/7/start)",
		experiment.StatusDraft:    "until it is started",
		experiment.StatusArchived: "will have none",
	} {
		e := ErrResultsNotAvailable(&experiment.Test{ID: 7, Status: status})
		if e.Kind != experiment.KindValidation || e.Code != "results_not_available" || e.Param != "id" || !strings.Contains(e.Message, want) {
			t.Errorf("%s: %s %s %q, want the message to say %q", status, e.Code, e.Param, e.Message, want)
		}
	}
}
