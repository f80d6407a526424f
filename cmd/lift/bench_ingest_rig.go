package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

// ingestRig is what the bench drives: the real ingest server (storefront
// handlers, WAL with fsync, flusher into a fresh ClickHouse database) and
// the bare handler, both on loopback, and the bodies they are sent.
type ingestRig struct {
	app              *App
	wh               *warehouse.Warehouse
	chDB             string
	real, bare       *loopbackServer
	realURL, bareURL string
	bodies           [][]byte
	stopIngest       func(context.Context) error
	closers          []func()
}

func newIngestRig(cmd *cobra.Command) (_ *ingestRig, err error) {
	ctx := cmd.Context()
	rig := &ingestRig{}
	defer func() {
		if err != nil {
			rig.close(ctx)
		}
	}()
	cfg, err := localConfig(cmd, false)
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, store.Config{URL: cfg.Postgres.URL})
	if err != nil {
		return nil, err
	}
	rig.closers = append(rig.closers, db.Close)
	if err := benchShop(ctx, db); err != nil {
		return nil, err
	}
	// A fresh ClickHouse database, dropped at the end, so the count check
	// sees only this run.
	rig.chDB = "lift_bench_" + randomHex(4)
	admin, err := warehouse.Open(ctx, warehouse.Config{Addr: cfg.ClickHouse.Addr, ReadTimeout: warehouse.MigrateReadTimeout})
	if err != nil {
		return nil, err
	}
	rig.closers = append(rig.closers, func() { admin.Close() })
	if err := warehouse.Migrate(ctx, admin.Conn(), rig.chDB, ""); err != nil {
		return nil, err
	}
	rig.closers = append(rig.closers, func() { admin.Conn().Exec(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+rig.chDB) })
	if rig.wh, err = warehouse.Open(ctx, warehouse.Config{Addr: cfg.ClickHouse.Addr, Database: rig.chDB}); err != nil {
		return nil, err
	}
	rig.closers = append(rig.closers, func() { rig.wh.Close() })
	dataDir, err := os.MkdirTemp("", "lift-bench-")
	if err != nil {
		return nil, err
	}
	rig.closers = append(rig.closers, func() { os.RemoveAll(dataDir) })
	cfg.DataDir = dataDir
	rig.app = &App{Config: cfg, DB: db, Warehouse: rig.wh, Now: func() time.Time { return time.Now().UTC() },
		Log: slog.New(benchLogHandler{slog.NewTextHandler(cmd.OutOrStdout(), nil)})}
	engine, stopIngest, err := rig.app.router("ingest")
	if err != nil {
		return nil, err
	}
	rig.stopIngest = stopIngest
	if rig.real, err = serveLoopback(engine); err != nil {
		return nil, err
	}
	rig.closers = append(rig.closers, rig.real.Close)
	if rig.bare, err = serveLoopback(http.HandlerFunc(bareAccept)); err != nil {
		return nil, err
	}
	rig.closers = append(rig.closers, rig.bare.Close)
	rig.bodies = benchBodies(1000)
	rig.realURL = "http://" + rig.real.Addr + "/api/track/event?shop=" + benchShopDomain
	rig.bareURL = "http://" + rig.bare.Addr + "/api/track/event?shop=" + benchShopDomain
	return rig, nil
}

// benchShop installs the shop the bench's events name, once.
func benchShop(ctx context.Context, db *store.DB) error {
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	if _, err := db.FindShopByDomain(ctx, benchShopDomain); err == nil {
		return nil
	}
	_, err := db.CreateShop(experiment.WithActor(ctx, experiment.Actor{Name: "bench"}), experiment.Shop{
		Domain: benchShopDomain, Name: "Bench", Timezone: "UTC", Currency: "USD"})
	return err
}

// close undoes newIngestRig, last step first; the ingester is stopped by
// drain, or here when the run ended before it.
func (r *ingestRig) close(ctx context.Context) {
	if r.stopIngest != nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		r.stopIngest(ctx)
	}
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
}

// drain stops the ingest server, lets the WAL empty into ClickHouse and
// checks that every event the runs got acknowledged is there once.
func (r *ingestRig) drain(ctx context.Context, out io.Writer, runs []loadResult) error {
	r.real.Close()
	drainCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	start := time.Now()
	stop := r.stopIngest
	r.stopIngest = nil
	if err := stop(drainCtx); err != nil {
		return err
	}
	var acked int64
	for _, run := range runs {
		acked += run.ok
	}
	var landed uint64
	if err := r.wh.Conn().QueryRow(ctx, "SELECT uniqExact(event_id) FROM "+r.chDB+".events").Scan(&landed); err != nil {
		return err
	}
	fmt.Fprintf(out, "drained in %s: %d events acknowledged, %d distinct event ids in ClickHouse\n",
		time.Since(start).Round(time.Millisecond), acked, landed)
	if landed != uint64(acked) {
		return fmt.Errorf("bench: %d acknowledged but %d landed", acked, landed)
	}
	return nil
}
