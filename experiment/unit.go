package experiment

import (
	"context"
	"strings"
)

// A unit of work is one all-or-nothing change on behalf of someone: the
// change itself, its audit record and, for a request under an
// Idempotency-Key, the response to replay. The types below are what every
// domain service hands to its repository port's Write and what every surface
// puts on the context; the store implements the unit in one transaction.

// Actor is who performs a write, for the audit log. A surface sets it once per
// request or task; commands and background jobs set their own.
type Actor struct {
	Name      string // "token", "session", "cli", "scheduler", "worker", "webhook"
	TokenID   int64  // when Name is "token"
	RequestID string
	Method    string
	Path      string
}

type actorKey struct{}
type claimKey struct{}

// WithActor returns ctx carrying the actor that a write records in the audit
// log.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom is the actor on ctx, or "system" when none was set.
func ActorFrom(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok {
		return a
	}
	return Actor{Name: "system"}
}

// IdempotencyClaim names a claimed Idempotency-Key.
type IdempotencyClaim struct {
	ShopID int64
	Key    string
}

// WithIdempotencyClaim returns ctx carrying a claimed Idempotency-Key. A write
// under it completes the claim with its response in the same unit of work.
func WithIdempotencyClaim(ctx context.Context, c IdempotencyClaim) context.Context {
	return context.WithValue(ctx, claimKey{}, c)
}

// ClaimFrom is the claim on ctx, if any.
func ClaimFrom(ctx context.Context) (IdempotencyClaim, bool) {
	c, ok := ctx.Value(claimKey{}).(IdempotencyClaim)
	return c, ok
}

// ClaimOutcome is what claiming an Idempotency-Key found.
type ClaimOutcome int

const (
	Claimed  ClaimOutcome = iota // the key is ours: perform the request
	Replay                       // a finished request used it: answer its response
	InUse                        // another request holds it and may still run
	Mismatch                     // the key was used with a different request
)

// ClaimResult is the outcome and, for Replay, the stored response.
type ClaimResult struct {
	Outcome ClaimOutcome
	Status  int
	Body    []byte
}

// WriteMeta describes a write for the audit log.
type WriteMeta struct {
	ShopID       int64  // 0 when the write creates the shop; then WriteResult.ShopID names it
	Action       string // e.g. "experiment.create", "experiment.start"
	ResourceType string // e.g. "experiment"
	// Reason is why the write happened when no person asked for it (an
	// automatic pause names the guardrail it breached); empty otherwise.
	Reason string
}

// WriteResult is what a write produced: the resource it touched and, for a
// request under an Idempotency-Key, the response to replay on a retry.
type WriteResult struct {
	ShopID     int64
	ResourceID string
	Status     int    // HTTP status of the response
	Body       []byte // the response body, exactly as sent
}

// tokenPrefix marks Lift secrets so they are recognisable in logs and secret
// scanners, and malformed ones are refused without a database round trip.
const tokenPrefix = "lift_"

// TokenPrefix is the prefix every API token secret starts with.
const TokenPrefix = tokenPrefix

// WellFormedSecret reports whether s could be a token secret at all.
func WellFormedSecret(s string) bool {
	return strings.HasPrefix(s, tokenPrefix) && len(s) == len(tokenPrefix)+43
}
