package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/experiment"
)

// IdempotencyStore keeps Idempotency-Key claims; *store.DB implements it.
type IdempotencyStore interface {
	ClaimIdempotencyKey(ctx context.Context, shopID int64, key string, requestHash []byte, staleAfter, retention time.Duration) (experiment.ClaimResult, error)
	CompleteIdempotencyKey(ctx context.Context, c experiment.IdempotencyClaim, status int, body []byte) error
	ReleaseIdempotencyKey(ctx context.Context, c experiment.IdempotencyClaim) error
}

// IdempotencyConfig sets how long claims live.
type IdempotencyConfig struct {
	StaleAfter time.Duration // an unfinished claim may be re-taken after this (contract: 90 s)
	Retention  time.Duration // a finished claim replays its response this long
}

// Idempotent guards a create route with the Idempotency-Key header. Without
// the header the request runs as usual. With it: 400 invalid_idempotency_key
// when empty or over 255 characters; the first response again (with
// Idempotent-Replayed: true) when a finished request used the key with the
// same method, path and body; 409 idempotency_key_in_use when another request
// holds the key or used it for a different request; 503
// idempotency_unavailable when the key cannot be checked. The handler's
// store.Write completes the claim in the write's own transaction.
func Idempotent(st IdempotencyStore, cfg IdempotencyConfig) gin.HandlerFunc {
	return func(c *gin.Context) {
		vals, sent := c.Request.Header["Idempotency-Key"]
		if !sent {
			c.Next()
			return
		}
		key := ""
		if len(vals) > 0 {
			key = vals[0]
		}
		// The key is stored as text: bytes that are not UTF-8 would fail the
		// claim (a 503) instead of being the caller's error.
		if key == "" || utf8.RuneCountInString(key) > 255 || len(vals) > 1 || !ValidText(key) {
			WriteError(c, Invalid("invalid_idempotency_key", "Idempotency-Key",
				"The Idempotency-Key header must be one non-empty value of at most 255 characters."))
			return
		}
		body, err := ReadBody(c)
		if err != nil {
			WriteError(c, err)
			return
		}
		shop := Shop(c)
		claim := experiment.IdempotencyClaim{ShopID: shop.ID, Key: key}
		res, err := st.ClaimIdempotencyKey(c.Request.Context(), shop.ID, key, requestHash(c.Request, body), cfg.StaleAfter, cfg.Retention)
		if err != nil {
			WriteError(c, experiment.Errorf(experiment.KindUnavailable, "idempotency_unavailable",
				"The Idempotency-Key could not be checked; nothing was done. Retry with the same key."))
			return
		}
		switch res.Outcome {
		case experiment.Replay:
			c.Header("Idempotent-Replayed", "true")
			c.Data(res.Status, "application/json; charset=utf-8", res.Body)
			c.Abort()
			return
		case experiment.InUse:
			WriteError(c, keyInUse("Another request with this Idempotency-Key is still running. Retry with the same key after 90 seconds, or use a new key."))
			return
		case experiment.Mismatch:
			WriteError(c, keyInUse("This Idempotency-Key was already used for a different request. Use a new key."))
			return
		}
		rec := &recorder{ResponseWriter: c.Writer}
		c.Writer = rec
		c.Request = c.Request.WithContext(experiment.WithIdempotencyClaim(c.Request.Context(), claim))
		c.Next()
		finish(c, st, claim, rec)
	}
}

// finish settles a claim the handler did not complete through store.Write:
// a refusal (4xx) is kept so a retry gets the same answer; after a failure of
// ours (5xx) the claim is dropped so a retry runs afresh.
func finish(c *gin.Context, st IdempotencyStore, claim experiment.IdempotencyClaim, rec *recorder) {
	ctx := context.WithoutCancel(c.Request.Context())
	if rec.Status() >= 500 {
		st.ReleaseIdempotencyKey(ctx, claim)
		return
	}
	// Completing an already completed claim does nothing (and reports it).
	st.CompleteIdempotencyKey(ctx, claim, rec.Status(), rec.body.Bytes())
}

func keyInUse(msg string) *experiment.Error {
	return experiment.Errorf(experiment.KindConflict, "idempotency_key_in_use", "%s", msg)
}

// requestHash fingerprints what a retry must repeat. A JSON body counts as
// its value, in one canonical form (no insignificant whitespace, object
// keys sorted, numbers as written), and no body as {}: a client that
// re-serializes its retry, in another key order too (v1 audit 2, V11),
// sends the same request. A body that is not JSON counts byte for byte.
func requestHash(r *http.Request, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte(r.Method + " " + r.URL.Path + "\n"))
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		body = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) == nil && dec.InputOffset() == int64(len(body)) {
		if canonical, err := json.Marshal(v); err == nil { // maps marshal with sorted keys
			body = canonical
		}
	}
	h.Write(body)
	return h.Sum(nil)
}

// recorder keeps a copy of the response body for the idempotency record.
type recorder struct {
	gin.ResponseWriter
	body bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

func (r *recorder) WriteString(s string) (int, error) {
	r.body.WriteString(s)
	return r.ResponseWriter.WriteString(s)
}
