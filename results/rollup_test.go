package results_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/results"
)

// preparer is the fake warehouse with a rollup to prepare: it records
// which tests it was asked to copy.
type preparer struct {
	*memory
	mu    sync.Mutex
	asked []string
}

func (p *preparer) PrepareRollup(_ context.Context, shopID int64, experimentID string) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, fmt.Sprintf("%d/%s", shopID, experimentID))
	return true, nil
}

func TestRollupPreparation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := &clock{now: start}
	m := newMemory(clk.Now)
	for id, status := range map[int64]experiment.Status{1: experiment.StatusActive, 2: experiment.StatusPaused,
		3: experiment.StatusDraft, 4: experiment.StatusActive, 5: experiment.StatusEnded} {
		m.tests[id] = &experiment.Test{ID: id, ShopID: 7, Status: status}
	}

	// A warehouse without a rollup to prepare: nothing is listed or asked.
	plain := results.New(results.Config{Repo: m, Tests: m, Warehouse: m, Now: clk.Now})
	if tests, err := plain.RollupsToPrepare(ctx, 10); err != nil || len(tests) != 0 {
		t.Errorf("without a preparer: %v, %v; want none", tests, err)
	}
	if err := plain.PrepareRollup(ctx, 7, 1); err != nil {
		t.Errorf("without a preparer: %v", err)
	}

	p := &preparer{memory: m}
	svc := results.New(results.Config{Repo: m, Tests: m, Warehouse: p, Now: clk.Now})
	tests, err := svc.RollupsToPrepare(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]results.RunningTest{{ShopID: 7, TestID: 1}, {ShopID: 7, TestID: 4}}, tests); diff != "" {
		t.Errorf("running tests (-want +got):\n%s", diff)
	}
	if one, err := svc.RollupsToPrepare(ctx, 1); err != nil || len(one) != 1 {
		t.Errorf("limit 1: %v, %v", one, err)
	}
	for _, tt := range tests {
		if err := svc.PrepareRollup(ctx, tt.ShopID, tt.TestID); err != nil {
			t.Fatal(err)
		}
	}
	// The warehouse names a test by its id as text, as every results read does.
	if diff := cmp.Diff([]string{"7/1", "7/4"}, p.asked); diff != "" {
		t.Errorf("asked to prepare (-want +got):\n%s", diff)
	}
}
