package ingest

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data (and only the metadata needed to read it back,
// none for a zero-filled segment).
func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
