package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/experiment"
)

// Policy says which scope a request needs and which rate budget it spends.
// The rule is GET and HEAD read (read scope, read budget) and every other
// request writes (write scope, write budget); Reads lists the routes that
// are exceptions. Routes are named by their gin pattern (c.FullPath()), so a
// policy follows the route table, not the shape of a URL.
type Policy struct {
	// Reads are non-GET routes that need only the read scope, with the
	// budget each one spends.
	Reads map[string]Class
}

// Scope is the scope the request needs.
func (p Policy) Scope(c *gin.Context) experiment.Scope {
	if isRead(c.Request) {
		return experiment.ScopeRead
	}
	if _, ok := p.Reads[c.FullPath()]; ok {
		return experiment.ScopeRead
	}
	return experiment.ScopeWrite
}

// Class is the budget the request spends.
func (p Policy) Class(c *gin.Context) Class {
	if isRead(c.Request) {
		return ClassRead
	}
	if class, ok := p.Reads[c.FullPath()]; ok {
		return class
	}
	return ClassWrite
}

func isRead(r *http.Request) bool { return r.Method == http.MethodGet || r.Method == http.MethodHead }
