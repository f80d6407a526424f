package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/liftab/lift/warehouse"
)

// liveSnapshot times a snapshot of the test as it stands while it runs:
// the timed rounds above read a rollup merged into one part, the best case;
// a live test also has rows in parts ClickHouse has not merged into the
// base yet, and every visitor with such rows (S) is merged from its states,
// which reads the base's states for all of them (S's visitors are spread
// over the whole base). It writes a second copy of the rollup rows of 1%
// of the visitors as a new part (the states merge idempotently, so the
// numbers stay the same), times snapshots with merges stopped, then merges
// the table back into one part (the next run's first snapshot writes the
// new base's copy, as it always does).
func liveSnapshot(ctx context.Context, out io.Writer, wh *warehouse.Warehouse, db string, rounds int, scan time.Duration,
	snapshot func() error) error {
	var list string // 18.16 wants an INSERT's columns named
	if err := wh.Conn().QueryRow(ctx, `SELECT arrayStringConcat(groupArray(name), ', ') FROM system.columns
		WHERE database = ? AND table = 'agg_visitors'`, db).Scan(&list); err != nil {
		return err
	}
	if err := wh.Conn().Exec(ctx, "SYSTEM STOP MERGES "+db+".agg_visitors"); err != nil {
		return err
	}
	defer func() {
		ctx := context.WithoutCancel(ctx)
		wh.Conn().Exec(ctx, "SYSTEM START MERGES "+db+".agg_visitors")
		wh.Conn().Exec(ctx, "OPTIMIZE TABLE agg_visitors FINAL")
	}()
	if err := wh.Conn().Exec(ctx, "INSERT INTO agg_visitors ("+list+") SELECT "+list+" FROM agg_visitors WHERE shop_id = 1 AND experiment_id = '"+
		strconv.Itoa(benchTestID)+"' AND vid % 100 = 0"); err != nil {
		return fmt.Errorf("live test: %w", err)
	}
	var beside uint64
	if err := wh.Conn().QueryRow(ctx, `SELECT count() FROM agg_visitors WHERE _part != (SELECT name FROM system.parts
		WHERE database = ? AND table = 'agg_visitors' AND active ORDER BY rows DESC LIMIT 1)`, db).Scan(&beside); err != nil {
		return err
	}
	times, err := timeRounds(rounds, snapshot)
	if err != nil {
		return fmt.Errorf("live snapshot: %w", err)
	}
	med := times[len(times)/2]
	fmt.Fprintf(out, "live test: %d visitors (1%%) with rollup rows in a part beside the base, as after activity ClickHouse has not merged yet\n", beside)
	fmt.Fprintf(out, "%-26s min %8s  median %8s  (%.1f× the bare scan; not a target: see docs/results.md, \"Live tests\")\n", "snapshot (live)",
		times[0].Round(time.Millisecond), med.Round(time.Millisecond), float64(med)/float64(scan))
	return nil
}
