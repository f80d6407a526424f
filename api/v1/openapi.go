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

// MountPublicOpenAPI serves the document at GET /openapi.json without a
// token: it describes the API, holds no shop's data, and a client generator
// or an assistant reads it before it has a token. /v1/openapi.json stays
// as it was, behind the token.
func MountPublicOpenAPI(r gin.IRouter) { r.GET("/openapi.json", serveOpenAPI) }

func serveOpenAPI(c *gin.Context) {
	c.Data(http.StatusOK, "application/json; charset=utf-8", openAPI)
}
