package v1

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/results"
)

// DownloadTTL is how long a signed export download link works (DESIGN §9).
const DownloadTTL = results.DownloadTTL

// Exports serves CSV exports of a test's orders: POST
// /v1/experiments/{id}/exports, GET /v1/exports/{id}, and the signed
// download GET /v1/exports/{id}/download, which carries no bearer token.
type Exports struct {
	Service *results.Service
	// PublicURL is the scheme and host clients reach the API on
	// (http.public_url); download links are built on it. Empty: the
	// scheme and host the request reached, never X-Forwarded-Host, so a
	// request cannot point a link at a host of its choosing.
	PublicURL string
}

// Routes mounts creation and reading on g (the authenticated /v1 group);
// idem guards the create with Idempotency-Key. A nil Exports mounts nothing.
func (h *Exports) Routes(g gin.IRouter, idem gin.HandlerFunc) {
	if h == nil {
		return
	}
	g.POST("/experiments/:id/exports", api.Query(), api.NoBody, idem, api.Handle(h.create))
	read(g, "/exports/:id", api.Query(), api.Handle(h.get))
}

// MountPublic mounts the signed download outside the authenticated group:
// the link is the credential (contract 4.6 rule 3). Errors answer in the v1
// envelope; an unknown, unfinished, expired or badly signed link is 404
// export_not_found, so a link reveals nothing about exports it does not name.
func (h *Exports) MountPublic(r gin.IRouter) {
	read(r, "/v1/exports/:id/download", api.UseSurface(api.SurfaceV1), api.Query("expires", "signature"), api.Handle(h.download))
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

// view renders x; a completed export gets a fresh download link that works
// for DownloadTTL from now.
func (h *Exports) view(c *gin.Context, x *results.Export) exportJSON {
	v := exportJSON{Object: "export", ID: x.ID, ExperimentID: strconv.FormatInt(x.ExperimentID, 10), Status: x.Status,
		RowCount: x.RowCount, CreatedAt: x.CreatedAt.UTC(), CompletedAt: x.CompletedAt}
	if x.CompletedAt != nil {
		t := x.CompletedAt.UTC()
		v.CompletedAt = &t
	}
	if link, exp, ok := h.Service.DownloadLink(h.baseURL(c), x); ok {
		v.DownloadURL, v.ExpiresAt = &link, &exp
	}
	return v
}

// DownloadPath is the signed path of an export's CSV, valid until exp.
func DownloadPath(secret []byte, exportID string, exp time.Time) string {
	return results.DownloadPath(secret, exportID, exp)
}

// baseURL is where download links point: the configured public URL, else
// the scheme and host this request reached.
func (h *Exports) baseURL(c *gin.Context) string {
	if h.PublicURL != "" {
		return strings.TrimRight(h.PublicURL, "/")
	}
	scheme := "http"
	if c.Request.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + c.Request.Host
}

// create answers 202 with a pending export: 404 experiment_not_found, 422
// export_not_available for a test that has not run yet.
func (h *Exports) create(c *gin.Context) error {
	id, err := api.TestID(c, "id")
	if err != nil {
		return err
	}
	status, body, err := h.Service.CreateExport(c.Request.Context(), api.Shop(c), id, func(x *results.Export) (int, []byte, error) {
		body, err := json.Marshal(h.view(c, x))
		return http.StatusAccepted, body, err
	})
	if err != nil {
		return err
	}
	c.Data(status, "application/json; charset=utf-8", body)
	return nil
}

// get reads an export; another shop's reads as 404 export_not_found.
func (h *Exports) get(c *gin.Context) error {
	x, err := h.Service.FindExport(c.Request.Context(), api.Shop(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	api.WriteJSON(c, http.StatusOK, h.view(c, x))
	return nil
}

// download serves the CSV of a completed export to whoever holds a link
// that is signed and not expired; 400 invalid_request (param expires) for
// an expiry further ahead than any link Lift mints.
func (h *Exports) download(c *gin.Context) error {
	id := c.Param("id")
	d, err := h.Service.OpenDownload(c.Request.Context(), id, c.Query("expires"), c.Query("signature"))
	if err != nil {
		return err
	}
	defer d.File.Close()
	st, err := d.File.Stat()
	if err != nil {
		return fmt.Errorf("v1.Exports.download %s: %w", id, err)
	}
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.csv"`, d.Export.ID))
	c.Header("Cache-Control", "private, no-store")
	http.ServeContent(c.Writer, c.Request, d.Export.ID+".csv", st.ModTime(), d.File)
	return nil
}
