package results

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/liftab/lift/experiment"
)

// DownloadTTL is how long a signed export download link works (DESIGN §9).
const DownloadTTL = 15 * time.Minute

// downloadSkew is how far ahead of DownloadTTL a link's expiry may be and
// still be honoured: nodes' clocks differ by a little, and a link minted
// on one node is served by another.
const downloadSkew = 30 * time.Second

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

// DownloadLink is a fresh link to a completed export's CSV under base (the
// public URL of the API, no trailing slash), valid for DownloadTTL from now.
// ok is false for an export that is not completed.
func (s *Service) DownloadLink(base string, x *Export) (link string, expires time.Time, ok bool) {
	if x.Status != ExportCompleted {
		return "", time.Time{}, false
	}
	exp := s.now().Add(DownloadTTL).Truncate(time.Second)
	return base + DownloadPath(s.cfg.SigningSecret, x.ID, exp), exp, true
}

// Download is an export's CSV opened for whoever holds its link.
type Download struct {
	Export *Export
	File   *os.File // the caller closes it
}

// OpenDownload checks a download link (its expires and signature query
// values) and opens the export's CSV. Errors: KindInvalidRequest
// invalid_request (param expires) for an expiry further ahead than any link
// this service mints; otherwise KindNotFound export_not_found for a link
// that is expired, badly signed, or names an export that is not completed
// or whose file is gone — one answer, so a link reveals nothing about
// exports it does not name; a good link to an expired export says the
// export expired.
func (s *Service) OpenDownload(ctx context.Context, id, expires, signature string) (*Download, error) {
	gone := experiment.Errorf(experiment.KindNotFound, "export_not_found",
		"This download link is unknown or expired. Read the export again (GET /v1/exports/%s) for a fresh link.", id)
	exp, err := strconv.ParseInt(expires, 10, 64)
	if err != nil {
		return nil, gone
	}
	now := s.now()
	if exp > now.Add(DownloadTTL+downloadSkew).Unix() {
		return nil, experiment.Errorf(experiment.KindInvalidRequest, "invalid_request",
			"expires is more than %d minutes ahead; download links work for %d minutes. Read the export again for a fresh link.",
			int(DownloadTTL/time.Minute), int(DownloadTTL/time.Minute)).WithParam("expires")
	}
	if now.Unix() > exp || !hmac.Equal([]byte(signDownload(s.cfg.SigningSecret, id, exp)), []byte(signature)) {
		return nil, gone
	}
	x, err := s.cfg.Repo.FindExportByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if x.Status == ExportExpired {
		return nil, s.expired(x) // the link is signed for it: saying so reveals nothing
	}
	if x.Status != ExportCompleted || x.File == "" {
		return nil, gone
	}
	f, err := os.Open(filepath.Join(s.cfg.ExportDir, filepath.Base(x.File)))
	if os.IsNotExist(err) {
		return nil, gone
	}
	if err != nil {
		return nil, fmt.Errorf("results.OpenDownload %s: %w", id, err)
	}
	return &Download{Export: x, File: f}, nil
}
