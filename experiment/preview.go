package experiment

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"
	"time"
)

// PreviewTTL is how long a preview link works.
const PreviewTTL = 24 * time.Hour

// PreviewLink is the `preview_link` object of DESIGN §9.
type PreviewLink struct {
	Object         string    `json:"object"`
	ExperimentID   int64     `json:"experiment_id,string"`
	TestGroupIndex int       `json:"test_group_index"`
	URL            string    `json:"url"`
	ExpiresAt      time.Time `json:"expires_at"`
}

// NewPreviewLink signs a storefront link that shows group index of t to
// whoever opens it. Shipping and checkout changes show only in a real
// checkout, so those tests answer 422 `preview_unsupported`.
func NewPreviewLink(shop *Shop, t *Test, index int, secret []byte, now time.Time) (*PreviewLink, error) {
	for _, k := range t.BundledTypes() {
		if k == TypeShipping || k == TypeCheckout {
			return nil, Refuse("preview_unsupported", "", "A %s change shows only in a real checkout; this test cannot show one group through a preview link.", k)
		}
	}
	if t.Group(index) == nil {
		return nil, Refuse("invalid_request", "index", "This test has no test group with index %d.", index)
	}
	exp := now.Add(PreviewTTL).UTC().Truncate(time.Second)
	token := SignPreview(secret, t.ID, index, exp)
	u := url.URL{Scheme: "https", Host: shop.Domain, Path: "/",
		RawQuery: url.Values{"lift_preview": {token}}.Encode()}
	return &PreviewLink{Object: "preview_link", ExperimentID: t.ID, TestGroupIndex: index,
		URL: u.String(), ExpiresAt: exp}, nil
}

// SignPreview makes the token of a preview link: "<id>.<index>.<unix exp>.<mac>".
func SignPreview(secret []byte, id int64, index int, exp time.Time) string {
	msg := fmt.Sprintf("%d.%d.%d", id, index, exp.Unix())
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(msg))
	return msg + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:16])
}

// VerifyPreview checks a preview token and returns the test id and group
// index it shows.
func VerifyPreview(secret []byte, token string, now time.Time) (id int64, index int, ok bool) {
	var exp int64
	if _, err := fmt.Sscanf(token, "%d.%d.%d.", &id, &index, &exp); err != nil {
		return 0, 0, false
	}
	want := SignPreview(secret, id, index, time.Unix(exp, 0))
	if !hmac.Equal([]byte(want), []byte(token)) || now.Unix() > exp {
		return 0, 0, false
	}
	return id, index, true
}
