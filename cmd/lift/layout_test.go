package main

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// The package rules of DESIGN §2, checked on the real import graph so a
// forbidden edge fails the build's tests instead of waiting for review.

const module = "github.com/liftab/lift"

// Drivers, by import-path prefix.
const (
	pgxPath        = "github.com/jackc/pgx/v5"
	clickhousePath = "github.com/ClickHouse/clickhouse-go/v2"
	asynqPath      = "github.com/hibiken/asynq"
)

// pkgGraph is one package's transitive dependencies and direct imports.
type pkgGraph struct {
	deps    []string
	imports []string
}

// layoutRule forbids packages matching from to depend on any package matching
// one of to; direct says whether only direct imports count.
type layoutRule struct {
	name   string
	from   func(pkg string) bool
	to     []string
	direct bool
}

// own is the module's package rel ("store") and everything under it.
func own(rel string) string { return module + "/" + rel }

// under reports whether pkg is path or a package below it.
func under(pkg, path string) bool { return pkg == path || strings.HasPrefix(pkg, path+"/") }

func within(rels ...string) func(string) bool {
	return func(pkg string) bool {
		for _, r := range rels {
			if under(pkg, own(r)) {
				return true
			}
		}
		return false
	}
}

// except matches every package of the module but those under rels.
func except(rels ...string) func(string) bool {
	in := within(rels...)
	return func(pkg string) bool { return under(pkg, module) && !in(pkg) }
}

var (
	adapters = []string{own("api"), own("store"), own("warehouse"), own("platform"), own("jobs"),
		own("devstack"), own("lifttest"), own("cmd")}
	drivers = []string{pgxPath, clickhousePath, asynqPath}
)

var layoutRules = []layoutRule{
	{name: "api depends on no adapter below it and no driver", from: within("api"),
		to: []string{own("store"), own("warehouse"), own("platform"), own("jobs"), pgxPath, clickhousePath, asynqPath}},
	{name: "jobs depends on no surface and no storage adapter", from: within("jobs"),
		to: []string{own("api"), own("store"), own("warehouse")}},
	{name: "the domain depends on no adapter and no driver", from: within("experiment", "results", "stats", "ingest"),
		to: append(append([]string{}, adapters...), drivers...)},
	{name: "pgx is imported only by store, devstack, lifttest and cmd/lift", direct: true,
		from: except("store", "devstack", "lifttest", "cmd/lift"), to: []string{pgxPath}},
	{name: "clickhouse-go is imported only by warehouse, lifttest and cmd/lift", direct: true,
		from: except("warehouse", "lifttest", "cmd/lift"), to: []string{clickhousePath}},
	{name: "what Lift serves to browsers (web) depends on no other package of Lift", from: within("web"),
		to: []string{own("api"), own("experiment"), own("results"), own("stats"), own("ingest"), own("money"),
			own("store"), own("warehouse"), own("platform"), own("jobs"), own("config"), own("metrics"),
			own("mcpserver"), own("migrations"), own("clickhouse"), own("devstack"), own("lifttest"), own("cmd")}},
	{name: "asynq is imported only by jobs and cmd/lift", direct: true,
		from: except("jobs", "cmd/lift"), to: []string{asynqPath}},
}

func TestPackageLayout(t *testing.T) {
	graph := listPackages(t)
	if len(graph) < 10 {
		t.Fatalf("go list found only %d packages; the layout check would prove nothing", len(graph))
	}
	for _, r := range layoutRules {
		t.Run(r.name, func(t *testing.T) {
			for _, edge := range r.violations(graph) {
				t.Errorf("forbidden edge %s (DESIGN §2)", edge)
			}
		})
	}
}

// violations lists the forbidden edges "pkg -> dep" of r in graph, sorted.
func (r layoutRule) violations(graph map[string]pkgGraph) []string {
	var out []string
	for pkg, g := range graph {
		if !r.from(pkg) {
			continue
		}
		edges := g.deps
		if r.direct {
			edges = g.imports
		}
		for _, dep := range edges {
			for _, bad := range r.to {
				if under(dep, bad) && !under(pkg, bad) {
					out = append(out, pkg+" -> "+dep)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestLayoutRulesCatchEdges(t *testing.T) {
	// The checker itself must see an edge: a rule that matches nothing passes
	// on any tree.
	graph := map[string]pkgGraph{
		own("api/v1"):     {deps: []string{own("experiment"), own("store"), pgxPath + "/pgconn"}},
		own("experiment"): {deps: []string{"context"}, imports: []string{"context"}},
		own("results"):    {imports: []string{asynqPath}, deps: []string{asynqPath}},
		own("cmd/lift"):   {imports: []string{pgxPath, clickhousePath, asynqPath}},
	}
	var got []string
	for _, r := range layoutRules {
		got = append(got, r.violations(graph)...)
	}
	sort.Strings(got)
	want := []string{
		own("api/v1") + " -> " + own("store"),
		own("api/v1") + " -> " + pgxPath + "/pgconn",
		own("results") + " -> " + asynqPath,
		own("results") + " -> " + asynqPath,
	}
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// listPackages runs go list over the module's non-test packages.
func listPackages(t *testing.T) map[string]pkgGraph {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps ","}} {{join .Imports ","}}`, module+"/...")
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	graph := map[string]pkgGraph{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		// Fields are space-separated; an empty list leaves an empty field.
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 {
			t.Fatalf("go list line %q: want 3 fields", line)
		}
		graph[f[0]] = pkgGraph{deps: split(f[1]), imports: split(f[2])}
	}
	return graph
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
