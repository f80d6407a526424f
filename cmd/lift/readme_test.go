package main

import (
	"os"
	"strings"
	"testing"

	"github.com/liftab/lift/config"
)

// TestReadmeListsEveryKey keeps the README's configuration table true.
func TestReadmeListsEveryKey(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, k := range config.Keys() {
		row := "| `" + k[0] + "` | `" + config.EnvName(k[0]) + "` |"
		if !strings.Contains(readme, row) {
			t.Errorf("README.md has no row for %s (want a line starting %q)", k[0], row)
		}
	}
}
