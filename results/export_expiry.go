package results

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/liftab/lift/experiment"
)

// ExpiredExports counts what one ExpireExports deleted.
type ExpiredExports struct {
	Files     int // export CSVs deleted with their export marked expired
	TempFiles int // temporary files of runs that died mid-write
}

// ExpireExports deletes the files of exports completed more than
// ExportRetention before now, so the export volume does not grow for ever
// (ops audit 2, O2-8). Each export is marked expired before its file is
// deleted: a crash in between leaves an export nobody can download whose
// file the next run deletes, never a completed export, with a fresh
// download link, whose file is gone. Temporary files of export runs that
// died mid-write (a killed worker skips their cleanup) go after the same
// time. With no retention it does nothing.
func (s *Service) ExpireExports(ctx context.Context, now time.Time) (ExpiredExports, error) {
	var out ExpiredExports
	if s.cfg.ExportRetention <= 0 {
		return out, nil
	}
	before := now.Add(-s.cfg.ExportRetention)
	xs, err := s.cfg.Repo.ExpireExports(ctx, before, now)
	if err != nil {
		return out, fmt.Errorf("results.ExpireExports: %w", err)
	}
	var errs []error
	for _, x := range xs {
		if x.File != "" { // never "": Base would name the directory itself
			if err := removeIfPresent(filepath.Join(s.cfg.ExportDir, filepath.Base(x.File))); err != nil {
				errs = append(errs, err)
				continue // the next run tries again: the export keeps its file name
			}
		}
		if err := s.cfg.Repo.ForgetExportFile(ctx, x.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		out.Files++
	}
	out.TempFiles, err = s.removeStaleTemps(before)
	if err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return out, fmt.Errorf("results.ExpireExports: %w", err)
	}
	return out, nil
}

// removeStaleTemps deletes the temporary files writeExport left in the
// export directory that were last written before `before`. No export names
// a temporary file, and no run writes one for that long.
func (s *Service) removeStaleTemps(before time.Time) (int, error) {
	temps, err := filepath.Glob(filepath.Join(s.cfg.ExportDir, "*.tmp"))
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, p := range temps {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !fi.ModTime().Before(before) {
			continue
		}
		if err := removeIfPresent(p); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// removeIfPresent deletes path; one already gone (a run that stopped after
// deleting it, an operator's cleanup) is not an error.
func removeIfPresent(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// expired is the answer to reading an expired export: the contract's 404
// export_not_found (it has no expired state), saying what happened and what
// to do.
func (s *Service) expired(x *Export) error {
	when := ""
	if x.ExpiredAt != nil {
		when = " on " + x.ExpiredAt.UTC().Format(time.DateOnly)
	}
	return experiment.Errorf(experiment.KindNotFound, "export_not_found",
		"Export %s expired%s: an export's file is kept for %s after it completes. Create a new export (POST /v1/experiments/%d/exports).",
		x.ID, when, keptFor(s.cfg.ExportRetention), x.ExperimentID)
}

// keptFor says a retention in days when it is whole days.
func keptFor(d time.Duration) string {
	switch {
	case d <= 0:
		return "a limited time"
	case d%(24*time.Hour) == 0 && d == 24*time.Hour:
		return "1 day"
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return d.String()
}
