package experiment

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The ports below are what Service needs from the world. The domain declares
// them; store (Postgres), platform (the commerce platform's admin API) and
// jobs (asynq) implement them, and experimenttest has in-memory fakes that
// run the same use-case suite.

// Repository is where tests live. Reads run on their own; every change runs
// in Write's unit of work.
type Repository interface {
	// Write runs fn in one all-or-nothing unit of work with its audit record
	// (meta, the actor on ctx) and, under a claimed Idempotency-Key on ctx,
	// completes the claim with the WriteResult's Status and Body. Returns
	// whatever fn returns (nothing kept); KindUnavailable when the audit
	// record cannot be written or the change collides with another
	// (nothing performed); KindTimeout when it runs too long (rolled back).
	Write(ctx context.Context, meta WriteMeta, fn func(ctx context.Context, tx Tx) (WriteResult, error)) (WriteResult, error)
	// FindShopByID returns KindNotFound shop_not_found when absent.
	FindShopByID(ctx context.Context, shopID int64) (*Shop, error)
	// FindTestByID returns KindNotFound experiment_not_found for an unknown
	// id or a test of another shop.
	FindTestByID(ctx context.Context, shopID, id int64) (*Test, error)
	// FindTests lists a shop's tests newest first, one page of f.Limit
	// (10 when unset), and reports whether more follow.
	FindTests(ctx context.Context, shopID int64, f Filter) ([]*Test, bool, error)
	// Catalog reads the shop catalog mirror outside a unit of work.
	Catalog() Catalog
	// ReleasesDue lists, by test id after afterID, at most limit tests of
	// installed shops that ended (or, never ended, were archived) at or
	// before endedBefore and are not yet marked released.
	ReleasesDue(ctx context.Context, endedBefore time.Time, afterID int64, limit int) ([]TestRef, error)
}

// Tx is a unit of work in progress: what Write hands to its function.
type Tx interface {
	// FindTestForUpdate reads a test and holds it until the unit ends, so
	// concurrent changes to one test serialise. KindNotFound
	// experiment_not_found as FindTestByID.
	FindTestForUpdate(ctx context.Context, shopID, id int64) (*Test, error)
	// CreateTest inserts t with its groups and sets t.ID. KindConflict
	// invalid_request when a group index appears twice.
	CreateTest(ctx context.Context, t *Test) error
	// SaveTest writes t's mutable fields and replaces its groups.
	// KindNotFound experiment_not_found when t is not a test of t.ShopID.
	SaveTest(ctx context.Context, t *Test) error
	// SetChecksPending marks whether asynchronous launch checks run for a
	// test. KindNotFound experiment_not_found when absent.
	SetChecksPending(ctx context.Context, shopID, id int64, pending bool) error
	// ForgetResults drops what was computed from a test's data once that
	// data is erased: its results snapshots go (the test answers 202 until
	// the next one) and its custom result queries fail with a reason.
	ForgetResults(ctx context.Context, shopID, id int64) error
	// Catalog reads the shop's catalog mirror inside the unit.
	Catalog() Catalog
	// LiveTests lists the shop's active and paused tests, and holds the
	// shop's launch lock until the unit ends: two launches of one shop
	// serialise, so the second sees what the first launched.
	LiveTests(ctx context.Context, shopID int64) ([]*Test, error)
	// MarkReleased records that the test's platform resources were
	// removed (ReleaseEnded). KindNotFound experiment_not_found when absent.
	MarkReleased(ctx context.Context, shopID, id int64, at time.Time) error
	// SetTestWarning raises or restates a standing warning on a test (one
	// a code); ClearTestWarning lifts it (warnings.go).
	SetTestWarning(ctx context.Context, shopID, testID int64, w Finding) error
	ClearTestWarning(ctx context.Context, testID int64, code string) error
}

// Platform is what a launch needs from the commerce platform.
type Platform interface {
	// PrepareLaunch makes the storefront able to show every group of t. It
	// returns a *PlatformError when the platform refused or could not be
	// reached: a refusal (PlatformError.Refused) blocks the launch with
	// nothing changed, any other such failure ends it in `failed`. Any other
	// error is a fault of ours and rolls the launch back.
	PrepareLaunch(ctx context.Context, shop *Shop, t *Test) error
	// ReleaseTest removes what launches of t made that only t uses: its
	// duplicate variants and its offer discount; the shop's price function
	// stays for the other tests. Removing what is already gone is not an
	// error. A refusal is a *PlatformError.
	ReleaseTest(ctx context.Context, shop *Shop, t *Test) (ReleaseReport, error)
	// DeliveryZones reads the shop's delivery zones as the platform has
	// them now, each saying whether it offers Lift's rates (their rates
	// may be left out): a shipping launch does not trust the mirror, which
	// may be a day old. Nil, without an error, when the shop's grant cannot
	// read them. A failure is a *PlatformError.
	DeliveryZones(ctx context.Context, shop *Shop) ([]Zone, error)
}

// PlatformError is a refused or failed call to the commerce platform. The
// platform adapter returns it so the domain can tell "the platform said no"
// (the test fails, recorded) from an internal error (nothing changes)
// without knowing the adapter.
type PlatformError struct {
	Op      string // e.g. "register cart transform"
	Status  int    // HTTP status, 0 when the platform could not be reached
	Message string
	// Code is the GraphQL error's extensions.code (e.g. ACCESS_DENIED),
	// when the platform answered with one.
	Code string
}

// Refused reports whether the platform answered that it will not do it as
// things stand (a 4xx other than 408 timeout or 429 throttling): a failed
// check the merchant must fix, where anything else is a failure worth
// retrying.
func (e *PlatformError) Refused() bool {
	return e.Status >= 400 && e.Status < 500 && e.Status != 408 && e.Status != 429
}

func (e *PlatformError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("platform: %s: %s", e.Op, e.Message)
	}
	return fmt.Sprintf("platform: %s: %d %s", e.Op, e.Status, e.Message)
}

// JobQueue hands work to the background workers.
type JobQueue interface {
	// EnqueueChecks queues the launch checks of a new theme or template
	// test. Checks already queued for the test are not an error. Any error
	// means the checks will not run.
	EnqueueChecks(ctx context.Context, shopID, testID int64) error
	// EnqueueCatalogRefresh queues a read of the shop's catalog soon, so a
	// zone the merchant has just handed to Lift rates reads as such within
	// minutes, not at the next daily refresh. One already queued is not an
	// error.
	EnqueueCatalogRefresh(ctx context.Context, shopID int64) error
}

// Eraser deletes what storefronts recorded about a test in the warehouse.
type Eraser interface {
	// EraseTest permanently deletes the test's collected events,
	// assignments, orders and revenue; its configuration stays. Erasing a
	// test with no data is not an error.
	EraseTest(ctx context.Context, shopID, testID int64) error
}

// Clock is the one clock, injected.
type Clock func() time.Time

// IsNotFound reports whether err says the thing asked for does not exist
// (a KindNotFound *Error, or ErrNotFound).
func IsNotFound(err error) bool {
	if e, ok := AsError(err); ok {
		return e.Kind == KindNotFound
	}
	return errors.Is(err, ErrNotFound)
}
