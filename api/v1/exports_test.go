package v1_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hibiken/asynq"

	v1 "github.com/liftab/lift/api/v1"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/results"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

// get is an unauthenticated GET, as a download link holder sends it.
func (e *exportEnv) get(t *testing.T, url string) (int, http.Header, []byte) {
	t.Helper()
	if !strings.HasPrefix(url, "http") {
		url = e.srv.URL + url
	}
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, raw
}

func (e *exportEnv) run(t *testing.T, s *shopEnv, exportID string) {
	t.Helper()
	if err := e.results.RunExport(context.Background(), s.shop.ID, exportID, true); err != nil {
		t.Fatal(err)
	}
}

func TestExportLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	s := e.newShop(store.ShopUpdate{})
	testID := e.started(t, s, "exported")

	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	order := func(id string, version uint64, group int16, revenue, cost float64, bot bool) warehouse.Order {
		return warehouse.Order{ShopID: s.shop.ID, ExperimentID: testID, OrderID: id, Version: version, TestGroup: group,
			VisitorID: "vis-" + id, SessionID: "sess-" + id, Revenue: revenue, Cost: cost, Currency: "USD",
			LineProductIDs: []string{"8101"}, LineVariantIDs: []string{"44001"}, LineQuantities: []uint32{2}, LinePrices: []float64{28},
			CreatedAt: at.Add(time.Duration(len(id)) * time.Minute), Source: "webhook", IsBot: bot}
	}
	if err := e.wh.Insert(ctx, &warehouse.Batch{Orders: []warehouse.Order{
		order("1001", 1, 0, 56, 19, false),
		order("20002", 1, 1, 56, 19, false),
		order("20002", 2, 1, 28.5, 9.5, false), // edited: this version stands
		order("300003", 1, 1, 10, 0, true),     // a bot's order is not exported
	}}); err != nil {
		t.Fatal(err)
	}

	// A read token may create an export (read scope, write budget).
	r := s.do(t, "POST", "/v1/experiments/"+testID+"/exports", "", "Authorization", "Bearer "+s.read)
	if r.Status != http.StatusAccepted {
		t.Fatalf("create = %d %s", r.Status, r.Raw)
	}
	x := id(r.Body)
	want := map[string]any{"object": "export", "id": x, "experiment_id": testID, "status": "pending", "row_count": nil,
		"created_at": epoch.Format(time.RFC3339), "completed_at": nil, "download_url": nil, "expires_at": nil}
	if d := cmp.Diff(want, r.Body); d != "" {
		t.Fatalf("created export mismatch (-want +got):\n%s", d)
	}
	if r.Header.Get("X-RateLimit-Limit") == "" {
		t.Error("no rate-limit headers")
	}
	t.Run("queued on the low queue", func(t *testing.T) {
		insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: e.redis.Addr, DB: e.redis.DB})
		defer insp.Close()
		if _, err := insp.GetTaskInfo(jobs.QueueLow, "export:"+x); err != nil {
			t.Fatalf("export task: %v", err)
		}
	})
	t.Run("audited as a write", func(t *testing.T) {
		entries, err := e.db.FindAuditEntries(ctx, s.shop.ID, 50)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range entries {
			if a.Action == "export.create" && a.ResourceID == x && a.Actor == "token" && a.Method == "POST" {
				return
			}
		}
		t.Fatalf("no export.create audit entry for %s", x)
	})
	if r := s.do(t, "GET", "/v1/exports/"+x, ""); r.Status != 200 || r.Body["status"] != "pending" {
		t.Fatalf("read pending = %d %s", r.Status, r.Raw)
	}

	e.run(t, s, x)
	e.clock.Set(epoch.Add(time.Minute))
	r = s.do(t, "GET", "/v1/exports/"+x, "", "Authorization", "Bearer "+s.read)
	if r.Status != 200 || r.Body["status"] != "completed" || r.Body["row_count"] != float64(2) || r.Body["completed_at"] == nil {
		t.Fatalf("read completed = %d %s", r.Status, r.Raw)
	}
	if r.Body["expires_at"] != epoch.Add(time.Minute+v1.DownloadTTL).Format(time.RFC3339) {
		t.Errorf("expires_at = %v, want 15 minutes from now", r.Body["expires_at"])
	}
	link := r.Body["download_url"].(string)
	if !strings.HasPrefix(link, e.srv.URL+"/v1/exports/"+x+"/download?") {
		t.Fatalf("download_url = %s", link)
	}

	t.Run("download", func(t *testing.T) {
		status, h, raw := e.get(t, link)
		if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/csv") {
			t.Fatalf("download = %d %s %s", status, h.Get("Content-Type"), raw)
		}
		rows, err := csv.NewReader(strings.NewReader(string(raw))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		want := [][]string{
			results.ExportHeader,
			{"1001", "2026-06-01T12:04:00Z", "0", "Control", "vis-1001", "sess-1001", "56.00", "19.00", "37.00", "USD", "1", "2", "1"},
			{"20002", "2026-06-01T12:05:00Z", "1", "Variant", "vis-20002", "sess-20002", "28.50", "9.50", "19.00", "USD", "1", "2", "2"},
		}
		if d := cmp.Diff(want, rows); d != "" {
			t.Fatalf("CSV mismatch (-want +got):\n%s", d)
		}
	})
	t.Run("X-Forwarded-Host never names the link's host", func(t *testing.T) {
		r := s.do(t, "GET", "/v1/exports/"+x, "", "X-Forwarded-Host", "evil.example", "X-Forwarded-Proto", "https")
		if got := r.Body["download_url"].(string); !strings.HasPrefix(got, e.srv.URL+"/v1/exports/") {
			t.Fatalf("download_url = %s, want the host the request reached", got)
		}
	})
	t.Run("expiry further ahead than 15 minutes", func(t *testing.T) {
		far := v1.DownloadPath([]byte("download-secret"), x, e.clock.Now().Add(v1.DownloadTTL+time.Hour))
		status, _, raw := e.get(t, far)
		if status != http.StatusBadRequest || !strings.Contains(string(raw), `"code":"invalid_request"`) ||
			!strings.Contains(string(raw), `"param":"expires"`) {
			t.Fatalf("far expiry = %d %s, want 400 invalid_request param expires", status, raw)
		}
	})
	t.Run("tampered link", func(t *testing.T) {
		status, _, raw := e.get(t, strings.Replace(link, "signature=", "signature=0", 1))
		wantDownloadRefused(t, status, raw)
	})
	t.Run("link for another export", func(t *testing.T) {
		status, _, raw := e.get(t, strings.Replace(link, x, "export_000000000000000000000000", 1))
		wantDownloadRefused(t, status, raw)
	})
	t.Run("expired link", func(t *testing.T) {
		e.clock.Set(epoch.Add(time.Minute + v1.DownloadTTL + time.Second))
		status, _, raw := e.get(t, link)
		wantDownloadRefused(t, status, raw)
		// Reading the export again mints a fresh link.
		r := s.do(t, "GET", "/v1/exports/"+x, "")
		if status, _, _ := e.get(t, r.Body["download_url"].(string)); status != 200 {
			t.Fatalf("fresh link = %d", status)
		}
	})
	t.Run("job redelivered after completion changes nothing", func(t *testing.T) {
		e.run(t, s, x)
		if r := s.do(t, "GET", "/v1/exports/"+x, ""); r.Body["status"] != "completed" || r.Body["row_count"] != float64(2) {
			t.Fatalf("after a second run: %s", r.Raw)
		}
	})
}

func wantDownloadRefused(t *testing.T, status int, raw []byte) {
	t.Helper()
	if status != http.StatusNotFound || !strings.Contains(string(raw), `"code":"export_not_found"`) ||
		!strings.Contains(string(raw), `"type":"not_found_error"`) {
		t.Fatalf("download = %d %s, want 404 export_not_found", status, raw)
	}
}

func TestExportErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})
	other := e.newShop(store.ShopUpdate{})
	draft := id(s.create(t, priceTest("draft")))
	preview := id(s.create(t, priceTest("preview")))
	if r := s.do(t, "POST", "/v1/experiments/"+preview+"/test_groups/1/preview", ""); r.Status != 200 {
		t.Fatalf("preview = %d %s", r.Status, r.Raw)
	}
	ran := e.started(t, s, "ran")
	otherRan := e.started(t, other, "theirs")
	theirs := id(other.do(t, "POST", "/v1/experiments/"+otherRan+"/exports", "").Body)

	cases := []struct {
		name, method, path string
		header             []string
		status             int
		typ, code, param   string
	}{
		{"draft test", "POST", "/v1/experiments/" + draft + "/exports", nil, 422, "validation_error", "export_not_available", ""},
		{"preview test", "POST", "/v1/experiments/" + preview + "/exports", nil, 422, "validation_error", "export_not_available", ""},
		{"unknown test", "POST", "/v1/experiments/999999/exports", nil, 404, "not_found_error", "experiment_not_found", ""},
		{"malformed test id", "POST", "/v1/experiments/abc/exports", nil, 404, "not_found_error", "experiment_not_found", ""},
		{"another shop's test", "POST", "/v1/experiments/" + otherRan + "/exports", nil, 404, "not_found_error", "experiment_not_found", ""},
		{"unknown query parameter", "POST", "/v1/experiments/" + ran + "/exports?format=xlsx", nil, 400, "invalid_request_error", "unknown_parameter", "format"},
		{"no token", "POST", "/v1/experiments/" + ran + "/exports", []string{"Authorization", ""}, 401, "authentication_error", "missing_token", ""},
		{"empty idempotency key", "POST", "/v1/experiments/" + ran + "/exports", []string{"Idempotency-Key", ""}, 400, "invalid_request_error", "invalid_idempotency_key", "Idempotency-Key"},
		{"unknown export", "GET", "/v1/exports/export_nope", nil, 404, "not_found_error", "export_not_found", ""},
		{"another shop's export", "GET", "/v1/exports/" + theirs, nil, 404, "not_found_error", "export_not_found", ""},
		{"download without a signature", "GET", "/v1/exports/" + theirs + "/download", nil, 404, "not_found_error", "export_not_found", ""},
		{"download with an unknown parameter", "GET", "/v1/exports/" + theirs + "/download?token=x", nil, 400, "invalid_request_error", "unknown_parameter", "token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, s.do(t, c.method, c.path, "", c.header...), c.status, c.typ, c.code, c.param)
		})
	}
	t.Run("download of an export not yet completed", func(t *testing.T) {
		status, _, raw := e.get(t, v1.DownloadPath([]byte("download-secret"), theirs, epoch.Add(time.Minute)))
		wantDownloadRefused(t, status, raw)
	})
}

func TestExportIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})
	ran := e.started(t, s, "ran")
	first := s.do(t, "POST", "/v1/experiments/"+ran+"/exports", "", "Idempotency-Key", "exp-key-1")
	second := s.do(t, "POST", "/v1/experiments/"+ran+"/exports", "", "Idempotency-Key", "exp-key-1")
	if first.Status != 202 || second.Status != 202 || string(first.Raw) != string(second.Raw) {
		t.Fatalf("first %d %s, second %d %s", first.Status, first.Raw, second.Status, second.Raw)
	}
	if second.Header.Get("Idempotent-Replayed") != "true" {
		t.Error("the retry was not a replay")
	}
	// No body and {} are the same request on a route that takes none.
	if r := s.do(t, "POST", "/v1/experiments/"+ran+"/exports", "{}", "Idempotency-Key", "exp-key-1"); r.Status != 202 || string(r.Raw) != string(first.Raw) {
		t.Fatalf("retry with {} = %d %s", r.Status, r.Raw)
	}
	third := s.do(t, "POST", "/v1/experiments/"+ran+"/exports", "", "Idempotency-Key", "exp-key-2")
	if third.Status != 202 || id(third.Body) == id(first.Body) {
		t.Fatalf("a new key = %d %s", third.Status, third.Raw)
	}
}

func TestExportJobFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})
	ran := e.started(t, s, "ran")
	x := id(s.do(t, "POST", "/v1/experiments/"+ran+"/exports", "").Body)
	// The export directory cannot be created under a regular file.
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := e.resultsConfig
	cfg.ExportDir = filepath.Join(blocker, "exports")
	if err := results.New(cfg).RunExport(context.Background(), s.shop.ID, x, true); err != nil {
		t.Fatal(err)
	}
	r := s.do(t, "GET", "/v1/exports/"+x, "")
	if r.Status != 200 || r.Body["status"] != "failed" || r.Body["download_url"] != nil || r.Body["row_count"] != nil {
		t.Fatalf("failed export = %d %s", r.Status, r.Raw)
	}
	if status, _, raw := e.get(t, v1.DownloadPath([]byte("download-secret"), x, epoch.Add(time.Minute))); status != 404 {
		t.Fatalf("download of a failed export = %d %s", status, raw)
	}
}

// The API queues the job inside the transaction that records the export; a
// worker that picks it up before the commit waits for it, then runs.
func TestExportJobWaitsForItsRecord(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	pool := lifttest.Pool(t, e.pgURL)
	s := e.newShop(store.ShopUpdate{})
	ran, err := strconv.ParseInt(e.started(t, s, "ran"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	x := &results.Export{ID: experiment.NewID("export_"), ShopID: s.shop.ID, ExperimentID: ran}
	done := make(chan error, 1)
	_, err = e.db.Write(ctx, experiment.WriteMeta{ShopID: s.shop.ID, Action: "export.create", ResourceType: "export"},
		func(ctx context.Context, tx *store.Tx) (experiment.WriteResult, error) {
			if err := tx.CreateExport(ctx, x); err != nil {
				return experiment.WriteResult{}, err
			}
			go func() { done <- e.results.RunExport(context.Background(), s.shop.ID, x.ID, true) }()
			// Commit only once the job is blocked on the export's lock.
			deadline := time.Now().Add(20 * time.Second)
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				var waiting int
				err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
					WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`).Scan(&waiting)
				if err != nil {
					return experiment.WriteResult{}, err
				}
				if waiting > 0 {
					return experiment.WriteResult{ResourceID: x.ID}, nil
				}
				if time.Now().After(deadline) {
					return experiment.WriteResult{}, fmt.Errorf("the job never waited for the export's lock")
				}
				<-tick.C
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if r := s.do(t, "GET", "/v1/exports/"+x.ID, ""); r.Body["status"] != "completed" || r.Body["row_count"] != float64(0) {
		t.Fatalf("export = %d %s", r.Status, r.Raw)
	}
}
