package experiment

import (
	"encoding/hex"

	"github.com/google/uuid"
)

// NewID is Lift's one generator of random ids: a version 4 UUID from
// google/uuid. Without a prefix it is the canonical form (session, event and
// row ids: 6f1c2a8e-4b7d-4e21-9a0b-3c5d7e9f1a2b); with one it is the prefix,
// naming the kind, then the UUID's 32 hex digits (req_…, rq_…, export_…),
// the shape opaque ids have in URLs and logs.
func NewID(prefix string) string {
	u := uuid.New()
	if prefix == "" {
		return u.String()
	}
	return prefix + hex.EncodeToString(u[:])
}
