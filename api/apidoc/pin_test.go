package apidoc

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// TestRendererIsWhatTheLockfilePins: the embedded Redoc bundle is the
// version web/package.json pins exactly and web/package-lock.json locks, so
// `make docs-assets` and the binary agree on what /docs runs.
func TestRendererIsWhatTheLockfilePins(t *testing.T) {
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	var lock struct {
		Packages map[string]struct {
			Version   string `json:"version"`
			Integrity string `json:"integrity"`
		} `json:"packages"`
	}
	for file, v := range map[string]any{"web/package.json": &pkg, "web/package-lock.json": &lock} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	want := pkg.Dependencies["redoc"]
	locked := lock.Packages["node_modules/redoc"]
	if want == "" || want != locked.Version || locked.Integrity == "" {
		t.Fatalf("package.json pins redoc %q, the lockfile locks %q (integrity %q): pin one exact version", want, locked.Version, locked.Integrity)
	}
	bundle, err := assets.ReadFile("assets/redoc.standalone.js")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(bundle, []byte(`"`+want+`"`)) {
		t.Fatalf("the embedded bundle is not Redoc %s: run make docs-assets", want)
	}
}

// TestDocumentBuilds: the parts compose without a path, tag or component
// declared twice, and every gin route shape maps to the document's.
func TestDocumentBuilds(t *testing.T) {
	if _, err := Document(); err != nil {
		t.Fatal(err)
	}
	for route, want := range map[string]string{
		"/v1/experiments/:id/results/:query_id": "/v1/experiments/{id}/results/{query_id}",
		"/app/*file":                            "/app/{file}",
		"/healthz":                              "/healthz",
	} {
		if got := PathOf(route); got != want {
			t.Errorf("PathOf(%q) = %q, want %q", route, got, want)
		}
	}
}
