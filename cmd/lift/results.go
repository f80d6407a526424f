package main

import (
	v1 "github.com/liftab/lift/api/v1"
	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/results"
	"github.com/liftab/lift/store"
)

// Results wiring: the worker computes snapshots (a running test's first
// about results.first_snapshot_after from its launch, then about every 6
// hours, a final one at its end), custom result queries and CSV exports,
// and every 15 minutes copies each running test's new rollup base;
// the public API serves them, and download links are signed with the
// process's signing secret.
func init() { jobKinds = append(jobKinds, resultsJobs) }

// results is the results service on this process's connections.
func (a *App) results() *results.Service {
	return results.New(results.Config{
		Repo:            store.ResultsRepository{DB: a.DB},
		Tests:           a.DB,
		Warehouse:       a.Warehouse,
		Jobs:            jobs.ResultsQueue{Client: a.Jobs},
		Pauser:          a.experiments(), // a guardrail breach pauses through the lifecycle
		Now:             a.Now,
		Logger:          a.Log,
		Snapshots:       results.SnapshotPolicy{FirstAfter: a.Config.Results.FirstSnapshotAfter},
		ExportDir:       a.exportsDir(),
		SigningSecret:   a.SigningSecret,
		ExportRetention: a.Config.Exports.Retention,
	})
}

func resultsJobs(a *App, w *jobs.Worker) []jobs.Source {
	s := a.results()
	jobs.HandleResults(w, s)
	jobs.HandleExports(w, s)
	jobs.HandleRollups(w, s)
	return []jobs.Source{jobs.SnapshotSource(s.SnapshotsDue, 500), jobs.RollupPrepareSource(s.RollupsToPrepare, 10_000)}
}

// analytics is the admin panel's session analytics over the same
// warehouse sums as the results (its response cache lives as long as the
// process's session surface).
func (a *App) analytics() *results.Analytics {
	return results.NewAnalytics(results.AnalyticsConfig{Tests: a.DB, Warehouse: a.Warehouse, Activity: a.Warehouse, Now: a.Now})
}

// resultsAPI is the results surface of the public API.
func (a *App) resultsAPI() *v1.Results { return &v1.Results{Service: a.results()} }

// exportsAPI is the exports resource of the public API; its links point at
// http.public_url when set.
func (a *App) exportsAPI() *v1.Exports {
	return &v1.Exports{Service: a.results(), PublicURL: a.Config.HTTP.PublicURL}
}
