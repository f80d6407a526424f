package experiment

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"
)

// Service is every use case of a shop's tests: create, update, read, list,
// the lifecycle actions with their platform side effects, preview links, the
// scheduler's starts and ends, and the launch checks. The public API, the
// admin session API and the jobs are views over it; none repeats a rule.
type Service struct {
	repo          Repository
	platform      Platform
	queue         JobQueue
	eraser        Eraser
	now           Clock
	previewSecret []byte
	launchBudget  time.Duration
	releaseAfter  time.Duration
	log           *slog.Logger
}

// ServiceConfig builds a Service; zero values take defaults.
type ServiceConfig struct {
	Repository Repository // required
	Platform   Platform   // required for start and launch checks
	// Jobs queues launch checks of new theme and template tests; nil
	// creates them ready (the checks run as part of the launch instead).
	Jobs JobQueue
	// Eraser deletes a test's collected data (ResetAnalytics); required
	// for that use case only.
	Eraser        Eraser
	Now           Clock // default time.Now
	PreviewSecret []byte
	// LaunchBudget bounds a launch's platform side effects; default 5 s,
	// well inside a write's timeout, so a hung platform ends the launch in
	// `failed`, recorded, instead of rolling it back unrecorded.
	LaunchBudget time.Duration
	// ReleaseAfter is how long an ended test's platform resources stay
	// (ReleaseEnded); default DefaultReleaseAfter.
	ReleaseAfter time.Duration
	Logger       *slog.Logger // default slog.Default()
}

// NewService returns a Service over the given ports.
func NewService(c ServiceConfig) *Service {
	if c.Repository == nil {
		panic("experiment.NewService: a Repository is required")
	}
	s := &Service{repo: c.Repository, platform: c.Platform, queue: c.Jobs, eraser: c.Eraser, now: c.Now,
		previewSecret: c.PreviewSecret, launchBudget: cmp.Or(c.LaunchBudget, 5*time.Second),
		releaseAfter: cmp.Or(c.ReleaseAfter, DefaultReleaseAfter), log: c.Logger}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

// clock reads the injected clock at the precision Postgres keeps, so what a
// write answers is what a later read returns.
func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// Outcome is what a use case produced, for the surface to render.
type Outcome struct {
	Test *Test
	// Warnings are the non-blocking findings of a create or update (never
	// nil there); nil for the lifecycle actions.
	Warnings []Finding
	Preview  *PreviewLink // the link a preview action made
	// Status and Body are what Reply rendered.
	Status int
	Body   []byte
}

// Reply renders an outcome as the surface's response. It runs inside the
// unit of work, so the response an Idempotency-Key replays is the one the
// change produced. A nil Reply renders nothing (jobs, commands).
type Reply func(o *Outcome) (status int, body []byte, err error)

func (o *Outcome) render(reply Reply) (WriteResult, error) {
	res := WriteResult{ResourceID: fmt.Sprint(o.Test.ID)}
	if reply == nil {
		return res, nil
	}
	var err error
	if o.Status, o.Body, err = reply(o); err != nil {
		return res, fmt.Errorf("experiment: render response: %w", err)
	}
	res.Status, res.Body = o.Status, o.Body
	return res, nil
}

// Create makes a new draft of shop from a create body (any creatable type).
// It answers what ParseCreate, CheckEntitlements (step create) and Validate
// answer; theme and template tests wait for their launch checks (queued
// here) and answer 409 checks_pending to most writes until they finish.
func (s *Service) Create(ctx context.Context, shop *Shop, body []byte, reply Reply) (*Outcome, error) {
	return s.create(ctx, shop, body, reply, false)
}

// create is Create; panel is the admin panel's create (parseCreate).
func (s *Service) create(ctx context.Context, shop *Shop, body []byte, reply Reply, panel bool) (*Outcome, error) {
	now := s.clock()
	t, err := parseCreate(body, shop.ID, now, panel)
	if err != nil {
		return nil, err
	}
	if err := CheckEntitlements(shop, t, StepCreate); err != nil {
		return nil, err
	}
	warnings, err := Validate(ctx, shop, t, s.repo.Catalog(), ValidateFull, now)
	if err != nil {
		return nil, err
	}
	live, err := s.liveTests(ctx, shop.ID)
	if err != nil {
		return nil, err
	}
	warnings = append(warnings, overlapWarning(t, live)...)
	sort.SliceStable(t.Groups, func(i, j int) bool { return t.Groups[i].Index < t.Groups[j].Index })
	// Theme and template tests wait for the theme check before they change.
	checks := s.queue != nil && NeedsChecks(t)
	t.ChecksPending = checks
	out := &Outcome{Test: t, Warnings: nonNilFindings(warnings)}
	_, err = s.repo.Write(ctx, WriteMeta{ShopID: shop.ID, Action: "experiment.create", ResourceType: "experiment"},
		func(ctx context.Context, tx Tx) (WriteResult, error) {
			if err := tx.CreateTest(ctx, t); err != nil {
				return WriteResult{}, err
			}
			if err := judgeZones(ctx, tx, t); err != nil {
				return WriteResult{}, err
			}
			return out.render(reply)
		})
	if err != nil {
		return nil, err
	}
	if checks {
		s.enqueueChecks(ctx, shop.ID, t.ID)
	}
	s.recheckZones(ctx, shop.ID, out.Warnings)
	return out, nil
}

// Update merges a sparse PATCH body into test id of shop (§4.2) and saves it
// when something changed. It answers 404 experiment_not_found, 501 for a
// test the API cannot read back, 409 checks_pending, what ApplyPatch answers
// (locked fields after launch, editor-owned content), 403 entitlements (step
// update) and Validate's findings; a launched test validates only its open
// fields.
func (s *Service) Update(ctx context.Context, shop *Shop, id int64, body []byte, reply Reply) (*Outcome, error) {
	now := s.clock()
	live, err := s.liveTests(ctx, shop.ID)
	if err != nil {
		return nil, err
	}
	var out *Outcome
	_, err = s.repo.Write(ctx, WriteMeta{ShopID: shop.ID, Action: "experiment.update", ResourceType: "experiment"},
		func(ctx context.Context, tx Tx) (WriteResult, error) {
			cur, err := tx.FindTestForUpdate(ctx, shop.ID, id)
			if err != nil {
				return WriteResult{}, err
			}
			if err := CheckReadable(cur); err != nil {
				return WriteResult{}, err
			}
			if out, err = s.patch(ctx, tx, shop, cur, body, now); err != nil {
				return WriteResult{}, err
			}
			out.Warnings = append(out.Warnings, overlapWarning(out.Test, live)...)
			return out.render(reply)
		})
	if err != nil {
		return nil, err
	}
	s.recheckZones(ctx, shop.ID, out.Warnings)
	return out, nil
}

// patch merges body into the locked test cur and saves it when something
// changed: Update's answers, for a test of any type (a checkout test, which
// Validate does not know, is checked by checkCheckout).
func (s *Service) patch(ctx context.Context, tx Tx, shop *Shop, cur *Test, body []byte, now time.Time) (*Outcome, error) {
	if cur.ChecksPending {
		return nil, errChecksPending()
	}
	next, patch, err := ApplyPatch(cur, body, now)
	if err != nil {
		return nil, err
	}
	if err := CheckEntitlements(shop, next, StepUpdate); err != nil {
		return nil, err
	}
	var warnings []Finding
	if next.Type == TypeCheckout {
		err = checkCheckout(next, now)
	} else {
		mode := ValidateFull
		if cur.Launched() {
			mode = ValidateOpenFields
		}
		warnings, err = Validate(ctx, shop, next, tx.Catalog(), mode, now)
		warnings, err = staleOnly(warnings, err, patch.Changed, func() error {
			_, err := Validate(ctx, shop, cur, tx.Catalog(), mode, now)
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	if len(patch.Changed) > 0 {
		if err := tx.SaveTest(ctx, next); err != nil {
			return nil, err
		}
	}
	if next.Type != TypeCheckout && !cur.Launched() { // launched: its zones are locked, the refresh judges them
		if err := judgeZones(ctx, tx, next); err != nil {
			return nil, err
		}
	}
	return &Outcome{Test: next, Warnings: nonNilFindings(warnings)}, nil
}

// staleOnly keeps a validation refusal of the patched test unless every
// error it finds was already found in the stored test: those become
// warnings. A PATCH changes only the fields sent (contract 4.2 rule 1), so
// a stored state gone stale (an end_at now past, a product since deleted)
// no longer blocks a rename (v1 audit 2, V3), while a PATCH that breaks
// something is refused as before; start still refuses a stale test with
// invalid_configuration.
func staleOnly(warnings []Finding, err error, changed []string, stored func() error) ([]Finding, error) {
	e, ok := AsError(err)
	if !ok || e.Kind != KindValidation || len(e.Findings) == 0 {
		return warnings, err
	}
	before, _ := AsError(stored())
	if before == nil {
		return warnings, err
	}
	for _, f := range e.Findings {
		stale := slices.ContainsFunc(before.Findings, func(b Finding) bool {
			return b.Severity == SeverityError && b.Code == f.Code && b.Param == f.Param
		})
		if f.Severity == SeverityError && (!stale || touches(f.Param, changed)) {
			return warnings, err
		}
	}
	for _, f := range e.Findings {
		f.Severity = SeverityWarning
		warnings = append(warnings, f)
	}
	return warnings, nil
}

// touches says a finding at param concerns one of the changed paths: the
// same field, one inside it, or one containing it. A finding about the
// whole test concerns every change.
func touches(param string, changed []string) bool {
	if param == "" {
		return len(changed) > 0
	}
	within := func(a, b string) bool {
		return a == b || strings.HasPrefix(a, b+".") || strings.HasPrefix(a, b+"[")
	}
	return slices.ContainsFunc(changed, func(c string) bool { return within(param, c) || within(c, param) })
}

func errChecksPending() error {
	return Errorf(KindConflict, "checks_pending", "This test is still being validated; retry in about a minute.")
}

// Get reads test id of shop: 404 experiment_not_found, or 501 when the API
// cannot read it back (CheckReadable).
func (s *Service) Get(ctx context.Context, shop *Shop, id int64) (*Test, error) {
	t, err := s.repo.FindTestByID(ctx, shop.ID, id)
	if err != nil {
		return nil, err
	}
	if err := CheckReadable(t); err != nil {
		return nil, err
	}
	return t, nil
}

// List returns one page of shop's tests, newest first, and whether more
// follow.
func (s *Service) List(ctx context.Context, shop *Shop, f Filter) ([]*Test, bool, error) {
	return s.repo.FindTests(ctx, shop.ID, f)
}

// NeedsChecks reports whether a new test waits for asynchronous launch
// checks: theme and template changes need the Lift app block in each theme
// they show.
func NeedsChecks(t *Test) bool {
	for _, k := range t.BundledTypes() {
		if k == TypeTheme || k == TypeTemplate {
			return true
		}
	}
	return false
}

// enqueueChecks hands a new test's checks to the worker. If the queue cannot
// take them the test must not stay pending forever: the flag is cleared and
// the checks run again at start, as part of the launch.
func (s *Service) enqueueChecks(ctx context.Context, shopID, testID int64) {
	err := s.queue.EnqueueChecks(ctx, shopID, testID)
	if err == nil {
		return
	}
	s.log.WarnContext(ctx, "launch checks not enqueued; clearing checks_pending", "experiment", testID, "err", err)
	if err := s.clearChecks(context.WithoutCancel(ctx), shopID, testID); err != nil {
		s.log.ErrorContext(ctx, "clearing checks_pending failed", "experiment", testID, "err", err)
	}
}

func (s *Service) clearChecks(ctx context.Context, shopID, testID int64) error {
	_, err := s.repo.Write(ctx, WriteMeta{ShopID: shopID, Action: "experiment.checks_done", ResourceType: "experiment"},
		func(ctx context.Context, tx Tx) (WriteResult, error) {
			return WriteResult{ResourceID: fmt.Sprint(testID)}, tx.SetChecksPending(ctx, shopID, testID, false)
		})
	return err
}

func nonNilFindings(f []Finding) []Finding {
	if f == nil {
		return []Finding{}
	}
	return f
}
