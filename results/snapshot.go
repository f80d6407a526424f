package results

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/liftab/lift/experiment"
)

// SnapshotEvery is how old a running test's snapshot may grow before a
// fresh one is due (contract §8: about every 6 hours).
const SnapshotEvery = 6 * time.Hour

// FirstSnapshotAfter is how long after its start a running test gets its
// first snapshot: soon enough to show the merchant that data flows, late
// enough that the numbers are not an empty first minute.
const FirstSnapshotAfter = 15 * time.Minute

// SnapshotPolicy says when a running test is due a snapshot: FirstAfter its
// start, then Every after the latest one.
type SnapshotPolicy struct {
	FirstAfter time.Duration
	Every      time.Duration
}

// Snapshot is one computation of a test's whole-run results (contract
// §2.8). Body is the snapshot as served, Summary the test's results_summary.
type Snapshot struct {
	ID         int64
	ShopID     int64
	TestID     int64
	ComputedAt time.Time
	Final      bool // taken when the test ended
	Body       json.RawMessage
	Summary    json.RawMessage
	// PauseReason is set when the snapshot found a guardrail breached: the
	// test is to be paused (not stored apart; the body carries it).
	PauseReason string
}

// SnapshotDue is a test whose results need computing.
type SnapshotDue struct {
	ShopID int64
	TestID int64
	Final  bool // the test has ended; this is its last snapshot
	// ChangedAt is set when a running test changed after its latest
	// snapshot (analysis options, guardrails, splits): the snapshot must
	// not wait up to 6 hours to use them, nor a new guardrail to be watched.
	ChangedAt *time.Time
}

// SnapshotsDue lists up to limit tests due a snapshot at now: running tests
// FirstAfter their start with none yet, or whose latest is Every old, and
// ended tests whose latest is not final. A test that ended before its first
// snapshot is never listed (it keeps answering 202); a paused one neither.
func (s *Service) SnapshotsDue(ctx context.Context, now time.Time, limit int) ([]SnapshotDue, error) {
	due, err := s.cfg.Repo.FindSnapshotsDue(ctx, now, s.cfg.Snapshots, limit)
	if err != nil {
		return nil, fmt.Errorf("results.SnapshotsDue: %w", err)
	}
	return due, nil
}

// TakeSnapshot computes and stores a test's snapshot, if its status still
// asks for one: a running test, or an ended test's final one. A paused test
// keeps the snapshot it had (contract part 3, rule 5), so nothing is done;
// nor for a test deleted since.
func (s *Service) TakeSnapshot(ctx context.Context, shopID, testID int64, final bool) error {
	t, err := s.cfg.Tests.FindTestByID(ctx, shopID, testID)
	if err != nil {
		if experiment.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("results.TakeSnapshot %d: %w", testID, err)
	}
	ended := t.Status == experiment.StatusEnded || t.Status == experiment.StatusArchived
	if t.Status != experiment.StatusActive && !(final && ended) {
		return nil
	}
	shop, err := s.cfg.Tests.FindShopByID(ctx, shopID)
	if err != nil {
		return fmt.Errorf("results.TakeSnapshot %d: %w", testID, err)
	}
	if err := s.settled(ctx, shopID, testID); err != nil {
		return fmt.Errorf("results.TakeSnapshot %d: %w", testID, err)
	}
	snap, err := s.ComputeSnapshot(ctx, shop, t, s.now(), final && ended)
	if err != nil {
		return fmt.Errorf("results.TakeSnapshot %d: %w", testID, err)
	}
	_, err = s.cfg.Repo.Write(worker(ctx, ""),
		experiment.WriteMeta{ShopID: shopID, Action: "results.snapshot", ResourceType: "experiment_results"},
		func(ctx context.Context, tx Tx) (experiment.WriteResult, error) {
			return experiment.WriteResult{ResourceID: strconv.FormatInt(testID, 10)}, tx.CreateSnapshot(ctx, snap)
		})
	if err != nil {
		return fmt.Errorf("results.TakeSnapshot %d: %w", testID, err)
	}
	return s.pauseOnBreach(ctx, snap)
}

// pauseOnBreach pauses the test of a snapshot that found a guardrail
// breached. The snapshot is saved first, so the results say why even if the
// pause must be retried (a retry computes a fresh snapshot and pauses).
func (s *Service) pauseOnBreach(ctx context.Context, snap *Snapshot) error {
	if snap.PauseReason == "" || snap.Final || s.cfg.Pauser == nil {
		return nil
	}
	paused, err := s.cfg.Pauser.PauseForGuardrail(worker(ctx, ""), snap.ShopID, snap.TestID, snap.PauseReason)
	if err != nil {
		return fmt.Errorf("results.TakeSnapshot %d: pause: %w", snap.TestID, err)
	}
	if paused {
		s.cfg.Logger.InfoContext(ctx, "test paused by a guardrail", "experiment", snap.TestID, "reason", snap.PauseReason)
	}
	return nil
}

// Latest is a test's latest snapshot as read now.
type Latest struct {
	Snapshot *Snapshot // nil before the first one: the API answers 202
	// IsRefreshing: the test runs and its snapshot is due again (a fresh
	// one is being computed).
	IsRefreshing bool
	// NextRefreshAt is when the next snapshot is due: Every after this
	// one while the test runs, nil when none will come (paused, ended).
	NextRefreshAt *time.Time
}

// LatestSnapshot reads a test's latest snapshot (GET …/results). Errors:
// KindNotFound experiment_not_found; 422 results_not_available for a test
// that never ran (a draft, a preview, one archived before it started: the
// custom query and the export answer the same), which no waiting will give
// results.
func (s *Service) LatestSnapshot(ctx context.Context, shop *experiment.Shop, testID int64) (Latest, error) {
	t, err := s.cfg.Tests.FindTestByID(ctx, shop.ID, testID)
	if err != nil {
		return Latest{}, err
	}
	if !HasRun(t) {
		return Latest{}, ErrResultsNotAvailable(t)
	}
	snap, err := s.cfg.Repo.LatestSnapshot(ctx, shop.ID, testID)
	if err != nil || snap == nil {
		return Latest{}, err
	}
	out := Latest{Snapshot: snap}
	if t.Status == experiment.StatusActive {
		next := snap.ComputedAt.Add(s.cfg.Snapshots.Every).UTC()
		out.IsRefreshing, out.NextRefreshAt = !s.now().Before(next), &next
	}
	return out, nil
}

// Summary is a test's results_summary (`?include=results_summary`): the
// headline of its latest snapshot, nil before the first.
func (s *Service) Summary(ctx context.Context, shopID, testID int64) (json.RawMessage, error) {
	snap, err := s.cfg.Repo.LatestSnapshot(ctx, shopID, testID)
	if err != nil || snap == nil {
		return nil, err
	}
	return snap.Summary, nil
}

// Window is a test's whole run in the shop's local dates: from the day it
// started to today, or to the day it ended.
func Window(shop *experiment.Shop, t *experiment.Test, now time.Time) DateRange {
	loc := shop.Location()
	start := t.CreatedAt
	if t.StartedAt != nil {
		start = *t.StartedAt
	}
	end := now
	if t.EndedAt != nil && t.EndedAt.Before(end) {
		end = *t.EndedAt
	}
	if end.Before(start) {
		end = start
	}
	return DateRange{GTE: start.In(loc).Format(time.DateOnly), LTE: end.In(loc).Format(time.DateOnly)}
}

func primaryMetric(t *experiment.Test) string {
	if t.PrimaryMetric != nil {
		return string(*t.PrimaryMetric)
	}
	return "conversion_rate"
}
