package main

import (
	v1 "github.com/liftab/lift/api/v1"
	"github.com/liftab/lift/jobs"
)

// Results wiring: the worker computes snapshots (every running test about
// every 6 hours, a final one at its end) and custom result queries; the
// public API serves them.
func init() { jobKinds = append(jobKinds, resultsJobs) }

func (a *App) results() *jobs.Results {
	return &jobs.Results{DB: a.DB, Warehouse: a.Warehouse, Jobs: a.Jobs, Now: a.Now}
}

func resultsJobs(a *App, w *jobs.Worker) []jobs.Source {
	jobs.HandleResults(w, a.results())
	return []jobs.Source{jobs.SnapshotSource(a.DB.FindSnapshotsDue, 500)}
}

// resultsAPI is the results surface of the public API.
func (a *App) resultsAPI() *v1.Results {
	return &v1.Results{DB: a.DB, Results: a.results(), Now: a.Now}
}
