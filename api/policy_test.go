package api

import (
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/experiment"
)

func TestPolicy(t *testing.T) {
	t.Parallel()
	p := Policy{Reads: map[string]Class{"/t/:id/results": ClassQuery, "/t/:id/exports": ClassWrite}}
	cases := []struct {
		method, path string
		scope        experiment.Scope
		class        Class
	}{
		{"GET", "/t/1", experiment.ScopeRead, ClassRead},
		{"HEAD", "/t/1", experiment.ScopeRead, ClassRead},
		{"GET", "/t/1/results", experiment.ScopeRead, ClassRead},
		{"POST", "/t/1/results", experiment.ScopeRead, ClassQuery},
		{"POST", "/t/1/exports", experiment.ScopeRead, ClassWrite},
		{"POST", "/t/1/start", experiment.ScopeWrite, ClassWrite},
		{"PATCH", "/t/1", experiment.ScopeWrite, ClassWrite},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			r := gin.New()
			var scope experiment.Scope
			var class Class
			probe := func(ctx *gin.Context) { scope, class = p.Scope(ctx), p.Class(ctx) }
			for _, route := range []string{"/t/:id", "/t/:id/results", "/t/:id/exports", "/t/:id/start"} {
				r.Handle(c.method, route, probe)
			}
			r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(c.method, c.path, nil))
			if scope != c.scope || class != c.class {
				t.Errorf("scope %s class %s, want %s %s", scope, class, c.scope, c.class)
			}
		})
	}
}
