package results_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/results"
)

// TestExpireExports: past exports.retention an export's file is deleted and
// the export reads, and downloads, as 404 export_not_found saying it
// expired; a younger export keeps its file and its link. A run that
// stopped between marking an export and deleting its file leaves nothing
// downloadable, and the next run deletes the file. Temporary files of
// export runs that died mid-write go after the same time (ops audit 2,
// O2-8). On Postgres and a temporary directory, and on the fakes.
func TestExpireExports(t *testing.T) {
	t.Parallel()
	const retention = 7 * 24 * time.Hour
	onEachBackend(t, start, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		cfg := b.cfg
		cfg.ExportRetention = retention
		svc := results.New(cfg)
		tt := b.test(t, experiment.StatusActive)
		b.plant(t, tt, visitors(10))
		export := func(at time.Time) string {
			t.Helper()
			b.clock.Set(at)
			if _, _, err := svc.CreateExport(ctx, b.shop, tt.ID, func(*results.Export) (int, []byte, error) { return 202, nil, nil }); err != nil {
				t.Fatal(err)
			}
			id := b.queue.exports[len(b.queue.exports)-1]
			if err := svc.RunExport(ctx, b.shop.ID, id, true); err != nil {
				t.Fatal(err)
			}
			return id
		}
		file := func(id string) string { return results.ExportFile(cfg.ExportDir, id) }
		exists := func(path string) bool {
			_, err := os.Stat(path)
			return err == nil
		}
		wantExpired := func(err error) {
			t.Helper()
			e, ok := experiment.AsError(err)
			if !ok || e.Kind != experiment.KindNotFound || e.Code != "export_not_found" || !strings.Contains(e.Message, "expired") ||
				!strings.Contains(e.Message, "7 days") {
				t.Fatalf("err = %v, want 404 export_not_found saying it expired", err)
			}
		}

		old := export(start)
		young := export(start.Add(6 * 24 * time.Hour))
		now := start.Add(retention + time.Hour)
		// A run that died writing an export (its deferred cleanup skipped)
		// long ago, and one writing now.
		staleTemp, freshTemp := filepath.Join(cfg.ExportDir, "export_dead.1.tmp"), filepath.Join(cfg.ExportDir, "export_live.2.tmp")
		for _, p := range []string{staleTemp, freshTemp} {
			if err := os.WriteFile(p, []byte("order_id\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(staleTemp, start, start); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(freshTemp, now, now); err != nil {
			t.Fatal(err)
		}
		// A link minted just before the export expires.
		b.clock.Set(now.Add(-5 * time.Minute))
		x, err := svc.FindExport(ctx, b.shop.ID, old)
		if err != nil {
			t.Fatal(err)
		}
		link, _, ok := svc.DownloadLink("https://lift.example", x)
		if !ok {
			t.Fatal("no link to a completed export")
		}
		b.clock.Set(now)

		got, err := svc.ExpireExports(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		if got != (results.ExpiredExports{Files: 1, TempFiles: 1}) {
			t.Fatalf("expired %+v, want one export file and one temporary file", got)
		}
		if exists(file(old)) || !exists(file(young)) || exists(staleTemp) || !exists(freshTemp) {
			t.Fatalf("files left: old %v, young %v, stale temp %v, fresh temp %v",
				exists(file(old)), exists(file(young)), exists(staleTemp), exists(freshTemp))
		}
		_, err = svc.FindExport(ctx, b.shop.ID, old)
		wantExpired(err)
		u, _ := url.Parse(link)
		_, err = svc.OpenDownload(ctx, old, u.Query().Get("expires"), u.Query().Get("signature"))
		wantExpired(err)
		if x, err := svc.FindExport(ctx, b.shop.ID, young); err != nil || x.Status != results.ExportCompleted {
			t.Fatalf("the younger export: %+v, %v", x, err)
		}

		// A run that marked the younger export and stopped before deleting
		// its file: nothing offers the file, and the next run deletes it.
		later := start.Add(6*24*time.Hour + retention + time.Hour)
		if _, err := cfg.Repo.ExpireExports(ctx, later.Add(-retention), later); err != nil {
			t.Fatal(err)
		}
		_, err = svc.FindExport(ctx, b.shop.ID, young)
		wantExpired(err)
		if !exists(file(young)) {
			t.Fatal("the marking deleted the file")
		}
		if got, err := svc.ExpireExports(ctx, later); err != nil || got.Files != 1 || exists(file(young)) {
			t.Fatalf("the next run: %+v, %v; file left %v", got, err, exists(file(young)))
		}
		if got, err := svc.ExpireExports(ctx, later); err != nil || got != (results.ExpiredExports{}) {
			t.Fatalf("a run with nothing due: %+v, %v", got, err)
		}
	})
}

// TestExpireExportsKeepsFilesWithoutRetention: exports.retention 0 keeps
// every file.
func TestExpireExportsKeepsFilesWithoutRetention(t *testing.T) {
	t.Parallel()
	onEachBackend(t, start, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		tt := b.test(t, experiment.StatusActive)
		if _, _, err := b.svc.CreateExport(ctx, b.shop, tt.ID, func(*results.Export) (int, []byte, error) { return 202, nil, nil }); err != nil {
			t.Fatal(err)
		}
		id := b.queue.exports[0]
		if err := b.svc.RunExport(ctx, b.shop.ID, id, true); err != nil {
			t.Fatal(err)
		}
		if got, err := b.svc.ExpireExports(ctx, start.AddDate(1, 0, 0)); err != nil || got != (results.ExpiredExports{}) {
			t.Fatalf("expired %+v, %v", got, err)
		}
		if x, err := b.svc.FindExport(ctx, b.shop.ID, id); err != nil || x.Status != results.ExportCompleted {
			t.Fatalf("export %+v, %v", x, err)
		}
	})
}
