package v1

import (
	_ "embed"
	"net/http"

	"github.com/gin-gonic/gin"
)

// openAPI is the OpenAPI 3.1 document of the whole v1 surface. Its paths are
// relative to the server URL, which ends in /v1. A test checks that every
// mounted /v1 route is documented here and every documented route mounted.
//
//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the embedded document.
func OpenAPI() []byte { return openAPI }

// serveOpenAPI answers GET /v1/openapi.json (behind a token, as it always
// was); the public document of every surface is package apidoc's.
func serveOpenAPI(c *gin.Context) {
	c.Data(http.StatusOK, "application/json; charset=utf-8", openAPI)
}
