//go:build !unix

package ingest

import (
	"os"
	"path/filepath"
)

// lockDir only holds the lock file where flock is not available: sharing a
// WAL directory between ingesters is not detected there.
func lockDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o644)
}
