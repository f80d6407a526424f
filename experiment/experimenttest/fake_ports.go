package experimenttest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/liftab/lift/experiment"
)

// The fakes of the service's ports other than the repository: the
// platform, the job queue and the eraser. Each records what it was asked
// and fails on demand.

// Platform is a fake experiment.Platform: it records each launch it
// prepares and fails or hangs on demand.
type Platform struct {
	mu       sync.Mutex
	err      error
	hang     bool
	slow     time.Duration
	launches []int64
	released []int64
	zones    []experiment.Zone // what DeliveryZones answers; nil: it cannot read them
}

// SetZones is what DeliveryZones answers from now on.
func (p *Platform) SetZones(z []experiment.Zone) { p.mu.Lock(); defer p.mu.Unlock(); p.zones = z }

// DeliveryZones implements experiment.Platform.
func (p *Platform) DeliveryZones(context.Context, *experiment.Shop) ([]experiment.Zone, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.zones), nil
}

// Slow makes every later PrepareLaunch take d, as a real platform's calls
// do: concurrent launches then overlap for that long.
func (p *Platform) Slow(d time.Duration) { p.mu.Lock(); defer p.mu.Unlock(); p.slow = d }

// Fail makes every later PrepareLaunch return err (nil heals).
func (p *Platform) Fail(err error) { p.mu.Lock(); defer p.mu.Unlock(); p.err, p.hang = err, false }

// Hang makes every later PrepareLaunch wait until its context ends and then
// report the platform unreachable, as the HTTP client does.
func (p *Platform) Hang() { p.mu.Lock(); defer p.mu.Unlock(); p.hang = true }

// Launches lists the tests whose launch was prepared successfully.
func (p *Platform) Launches() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int64(nil), p.launches...)
}

// PrepareLaunch implements experiment.Platform.
func (p *Platform) PrepareLaunch(ctx context.Context, _ *experiment.Shop, t *experiment.Test) error {
	p.mu.Lock()
	err, hang, slow := p.err, p.hang, p.slow
	p.mu.Unlock()
	time.Sleep(slow)
	if hang {
		<-ctx.Done()
		return &experiment.PlatformError{Op: "duplicate variants", Message: "platform unreachable: " + ctx.Err().Error()}
	}
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.launches = append(p.launches, t.ID)
	return nil
}

// Released lists the tests whose platform resources were released.
func (p *Platform) Released() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int64(nil), p.released...)
}

// ReleaseTest implements experiment.Platform: it fails as Fail says, and
// reports a duplicate per launch of the test.
func (p *Platform) ReleaseTest(_ context.Context, _ *experiment.Shop, t *experiment.Test) (experiment.ReleaseReport, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return experiment.ReleaseReport{}, p.err
	}
	p.released = append(p.released, t.ID)
	return experiment.ReleaseReport{DuplicateVariants: len(slices.DeleteFunc(slices.Clone(p.launches), func(id int64) bool { return id != t.ID }))}, nil
}

// Queue is a fake experiment.JobQueue.
type Queue struct {
	mu        sync.Mutex
	err       error
	checks    []int64
	refreshes []int64 // shops
}

// Refreshes lists the shops whose catalog refresh was queued.
func (q *Queue) Refreshes() []int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]int64(nil), q.refreshes...)
}

// EnqueueCatalogRefresh implements experiment.JobQueue.
func (q *Queue) EnqueueCatalogRefresh(_ context.Context, shopID int64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return q.err
	}
	q.refreshes = append(q.refreshes, shopID)
	return nil
}

// Fail makes every later enqueue return err (nil heals).
func (q *Queue) Fail(err error) { q.mu.Lock(); defer q.mu.Unlock(); q.err = err }

// Checks lists the tests whose launch checks were queued.
func (q *Queue) Checks() []int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]int64(nil), q.checks...)
}

// EnqueueChecks implements experiment.JobQueue.
func (q *Queue) EnqueueChecks(_ context.Context, _, testID int64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return q.err
	}
	q.checks = append(q.checks, testID)
	return nil
}

// Eraser is a fake experiment.Eraser: it records each erase and fails on
// demand.
type Eraser struct {
	mu     sync.Mutex
	err    error
	erased [][2]int64 // shop, test
}

// Fail makes every later erase return err (nil heals).
func (e *Eraser) Fail(err error) { e.mu.Lock(); defer e.mu.Unlock(); e.err = err }

// Erased lists the (shop, test) pairs erased, oldest first.
func (e *Eraser) Erased() [][2]int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([][2]int64(nil), e.erased...)
}

// EraseTest implements experiment.Eraser.
func (e *Eraser) EraseTest(_ context.Context, shopID, testID int64) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return e.err
	}
	e.erased = append(e.erased, [2]int64{shopID, testID})
	return nil
}
