package experiment

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// A launch leaves things on the platform: a price test's duplicate
// variants, an offer test's automatic discount. Ending the test stops the
// storefront from using them, but a visitor's cart may still hold a
// duplicate, or qualify for the discount, and checkout honours the price
// the visitor saw. So they stay for a while after the end (jobs.release_after), and then
// the hourly sweep (ReleaseEnded) removes them: kept for ever they pile up
// in the merchant's product admin (a product's variants and the shop's
// automatic discounts are capped by the platform) until uninstall.

// DefaultReleaseAfter is how long a test's platform resources outlive its
// end unless ServiceConfig.ReleaseAfter says otherwise (jobs.release_after):
// two weeks is longer than a cart is normally kept open.
const DefaultReleaseAfter = 14 * 24 * time.Hour

// releaseBatch is how many due tests one read of the sweep lists.
const releaseBatch = 100

// TestRef names a test of a shop.
type TestRef struct {
	ShopID, TestID int64
}

// ReleaseReport says what a release removed from the platform.
type ReleaseReport struct {
	DuplicateVariants int
	Discounts         int
}

// ReleaseSummary is what one sweep did.
type ReleaseSummary struct {
	Released int // tests marked released (with or without platform calls)
	Failed   int // tests the platform refused; the next sweep tries again
	ReleaseReport
}

// holdsPlatformResources reports whether a launch of t creates anything on
// the platform that its end should remove.
func holdsPlatformResources(t *Test) bool {
	kinds := t.BundledTypes()
	return slices.Contains(kinds, TypePrice) || slices.Contains(kinds, TypeOffer)
}

// ReleaseEnded removes the platform resources of every test of an
// installed shop that ended (or was archived) the service's release delay
// or more before now, and marks each released with an audit record saying what
// went. A test the platform refuses stays due, is counted in Failed and
// retried at the next sweep; the others go on. Tests of other types are
// marked without a call. The error is the stores' failures only.
func (s *Service) ReleaseEnded(ctx context.Context, now time.Time) (ReleaseSummary, error) {
	var sum ReleaseSummary
	var errs []error
	var after int64
	for {
		due, err := s.repo.ReleasesDue(ctx, now.Add(-s.releaseAfter), after, releaseBatch)
		if err != nil {
			return sum, fmt.Errorf("experiment.ReleaseEnded: %w", err)
		}
		for _, ref := range due {
			rep, err := s.release(ctx, ref)
			var pe *PlatformError
			if errors.As(err, &pe) {
				sum.Failed++ // logged; the next sweep tries again
				continue
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			sum.Released++
			sum.DuplicateVariants += rep.DuplicateVariants
			sum.Discounts += rep.Discounts
		}
		if len(due) < releaseBatch {
			return sum, errors.Join(errs...)
		}
		after = due[len(due)-1].TestID
	}
}

func (s *Service) release(ctx context.Context, ref TestRef) (ReleaseReport, error) {
	var rep ReleaseReport
	shop, err := s.repo.FindShopByID(ctx, ref.ShopID)
	if err != nil {
		return rep, fmt.Errorf("experiment.ReleaseEnded: shop %d: %w", ref.ShopID, err)
	}
	t, err := s.repo.FindTestByID(ctx, ref.ShopID, ref.TestID)
	if err != nil {
		return rep, fmt.Errorf("experiment.ReleaseEnded: test %d: %w", ref.TestID, err)
	}
	if holdsPlatformResources(t) {
		if s.platform == nil {
			return rep, errors.New("experiment.ReleaseEnded: no Platform to release with")
		}
		if rep, err = s.platform.ReleaseTest(ctx, shop, t); err != nil {
			s.log.Warn("release: the platform refused; retried at the next sweep", "shop_id", ref.ShopID, "test_id", ref.TestID, "err", err)
			return rep, fmt.Errorf("experiment.ReleaseEnded: test %d: %w", ref.TestID, err)
		}
	}
	reason := fmt.Sprintf("ended (or archived) %s ago or more: removed %d duplicate variants and %d discounts from the platform",
		spell(s.releaseAfter), rep.DuplicateVariants, rep.Discounts)
	_, err = s.repo.Write(ctx, WriteMeta{ShopID: ref.ShopID, Action: "experiment.release_platform", ResourceType: "experiment", Reason: reason},
		func(ctx context.Context, tx Tx) (WriteResult, error) {
			return WriteResult{ResourceID: fmt.Sprint(ref.TestID)}, tx.MarkReleased(ctx, ref.ShopID, ref.TestID, s.clock())
		})
	if err != nil {
		return rep, fmt.Errorf("experiment.ReleaseEnded: test %d: %w", ref.TestID, err)
	}
	return rep, nil
}

// spell writes a delay as merchants read it: whole days as days.
func spell(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return d.String()
}
