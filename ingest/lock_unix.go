//go:build unix

package ingest

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes an exclusive lock on the WAL directory for this ingester.
// Two ingesters on one directory would delete each other's segments (each
// trims and removes what it takes for a previous run's leftovers); the
// second is refused instead. The kernel drops the lock when the process
// dies, so a crash never leaves the directory locked.
func lockDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrWALInUse
		}
		return nil, err
	}
	return f, nil
}
