package v1

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/store"
)

// DownloadTTL is how long a signed export download link works (DESIGN §9).
const DownloadTTL = 15 * time.Minute

// Exports serves CSV exports of a test's orders: POST
// /v1/experiments/{id}/exports, GET /v1/exports/{id}, and the signed
// download GET /v1/exports/{id}/download, which carries no bearer token.
type Exports struct {
	DB   *store.DB
	Jobs interface {
		Enqueue(context.Context, jobs.Job) error
	}
	Dir    string // data_dir/exports, where the export job writes the files
	Secret []byte // signs download links (the App's SigningSecret)
	Now    func() time.Time
}

// Routes mounts creation and reading on g (the authenticated /v1 group);
// idem guards the create with Idempotency-Key. A nil Exports mounts nothing.
func (h *Exports) Routes(g gin.IRouter, idem gin.HandlerFunc) {
	if h == nil {
		return
	}
	g.POST("/experiments/:id/exports", api.Query(), idem, api.Handle(h.create))
	g.GET("/exports/:id", api.Query(), api.Handle(h.get))
}

// MountPublic mounts the signed download outside the authenticated group:
// the link is the credential (contract 4.6 rule 3). Errors answer in the v1
// envelope; an unknown, unfinished, expired or badly signed link is 404
// export_not_found, so a link reveals nothing about exports it does not name.
func (h *Exports) MountPublic(r gin.IRouter) {
	r.GET("/v1/exports/:id/download", api.UseSurface(api.SurfaceV1), api.Query("expires", "signature"), api.Handle(h.download))
}

// exportJSON is the `export` object of DESIGN §9.
type exportJSON struct {
	Object       string     `json:"object"`
	ID           string     `json:"id"`
	ExperimentID string     `json:"experiment_id"`
	Status       string     `json:"status"`
	RowCount     *int64     `json:"row_count"`
	CreatedAt    time.Time  `json:"created_at"`
	CompletedAt  *time.Time `json:"completed_at"`
	DownloadURL  *string    `json:"download_url"`
	ExpiresAt    *time.Time `json:"expires_at"`
}

func (h *Exports) now() time.Time {
	if h.Now == nil {
		return time.Now().UTC()
	}
	return h.Now().UTC()
}

// view renders x; a completed export gets a fresh download link that works
// for DownloadTTL from now.
func (h *Exports) view(c *gin.Context, x *store.Export) exportJSON {
	v := exportJSON{Object: "export", ID: x.ID, ExperimentID: strconv.FormatInt(x.ExperimentID, 10), Status: x.Status,
		RowCount: x.RowCount, CreatedAt: x.CreatedAt.UTC(), CompletedAt: x.CompletedAt}
	if x.CompletedAt != nil {
		t := x.CompletedAt.UTC()
		v.CompletedAt = &t
	}
	if x.Status == store.ExportCompleted {
		exp := h.now().Add(DownloadTTL).Truncate(time.Second)
		link := baseURL(c) + DownloadPath(h.Secret, x.ID, exp)
		v.DownloadURL, v.ExpiresAt = &link, &exp
	}
	return v
}

// DownloadPath is the signed path of an export's CSV, valid until exp.
func DownloadPath(secret []byte, exportID string, exp time.Time) string {
	q := url.Values{"expires": {strconv.FormatInt(exp.Unix(), 10)}, "signature": {signDownload(secret, exportID, exp.Unix())}}
	return "/v1/exports/" + url.PathEscape(exportID) + "/download?" + q.Encode()
}

func signDownload(secret []byte, exportID string, exp int64) string {
	m := hmac.New(sha256.New, secret)
	fmt.Fprintf(m, "export-download:%s:%d", exportID, exp)
	return hex.EncodeToString(m.Sum(nil))
}

// baseURL is the scheme and host the client reached us on, so the link
// works from where the client stands (behind a proxy: X-Forwarded-*).
func baseURL(c *gin.Context) string {
	scheme := "http"
	if c.Request.TLS != nil {
		scheme = "https"
	}
	if p := c.GetHeader("X-Forwarded-Proto"); p == "https" || p == "http" {
		scheme = p
	}
	host := c.Request.Host
	if fh := c.GetHeader("X-Forwarded-Host"); fh != "" {
		host = fh
	}
	return scheme + "://" + host
}

// create answers 202 with a pending export: 404 experiment_not_found, 422
// export_not_available for a test that has not run yet. The record and its
// audit entry are one write; the job is queued on the low queue inside it.
func (h *Exports) create(c *gin.Context) error {
	id, err := testID(c)
	if err != nil {
		return err
	}
	shop := api.Shop(c)
	ctx := c.Request.Context()
	t, err := h.DB.FindTestByID(ctx, shop.ID, id)
	if err != nil {
		return err
	}
	if !t.Launched() {
		return experiment.Refuse("export_not_available", "",
			"This test has not run yet (status %s), so it has no orders to export.", t.Status)
	}
	x := &store.Export{ID: api.NewID("export_"), ShopID: shop.ID, ExperimentID: t.ID}
	res, err := h.DB.Write(ctx, experiment.WriteMeta{ShopID: shop.ID, Action: "export.create", ResourceType: "export"},
		func(ctx context.Context, tx *store.Tx) (experiment.WriteResult, error) {
			if err := tx.CreateExport(ctx, x); err != nil {
				return experiment.WriteResult{}, err
			}
			if err := h.Jobs.Enqueue(ctx, jobs.ExportJob(shop.ID, x.ID)); err != nil {
				return experiment.WriteResult{}, experiment.Errorf(experiment.KindUnavailable, "internal_error",
					"The export could not be queued; nothing was created. Retry.")
			}
			body, err := json.Marshal(h.view(c, x))
			if err != nil {
				return experiment.WriteResult{}, err
			}
			return experiment.WriteResult{ResourceID: x.ID, Status: http.StatusAccepted, Body: body}, nil
		})
	if err != nil {
		return err
	}
	c.Data(res.Status, "application/json; charset=utf-8", res.Body)
	return nil
}

// get reads an export; another shop's reads as 404 export_not_found.
func (h *Exports) get(c *gin.Context) error {
	x, err := h.DB.FindExport(c.Request.Context(), api.Shop(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	api.WriteJSON(c, http.StatusOK, h.view(c, x))
	return nil
}

// download serves the CSV of a completed export to whoever holds a link
// that is signed and not expired.
func (h *Exports) download(c *gin.Context) error {
	id := c.Param("id")
	gone := experiment.Errorf(experiment.KindNotFound, "export_not_found",
		"This download link is unknown or expired. Read the export again (GET /v1/exports/%s) for a fresh link.", id)
	exp, err := strconv.ParseInt(c.Query("expires"), 10, 64)
	if err != nil || h.now().Unix() > exp {
		return gone
	}
	want := signDownload(h.Secret, id, exp)
	if !hmac.Equal([]byte(want), []byte(c.Query("signature"))) {
		return gone
	}
	x, err := h.DB.FindExportByID(c.Request.Context(), id)
	if err != nil {
		return err
	}
	if x.Status != store.ExportCompleted || x.File == "" {
		return gone
	}
	f, err := os.Open(filepath.Join(h.Dir, filepath.Base(x.File)))
	if os.IsNotExist(err) {
		return gone
	}
	if err != nil {
		return fmt.Errorf("v1.Exports.download %s: %w", id, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("v1.Exports.download %s: %w", id, err)
	}
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.csv"`, x.ID))
	c.Header("Cache-Control", "private, no-store")
	http.ServeContent(c.Writer, c.Request, x.ID+".csv", st.ModTime(), f)
	return nil
}
