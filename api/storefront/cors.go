package storefront

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// cors lets any storefront origin call these endpoints. They are public and
// carry no credentials (no cookies, no Authorization), so "*" is correct:
// a shop's storefront may live on its platform domain or any custom domain,
// and the shop parameter only routes data (session document part 5).
//
// The values are shared slices set directly (the keys are canonical
// already): Header.Set would allocate two per tracking call. Nothing edits a
// header value in place, and an Add copies a full slice first.
func cors(c *gin.Context) {
	h := c.Writer.Header()
	h["Access-Control-Allow-Origin"] = anyOrigin
	h["Access-Control-Expose-Headers"] = exposeRetryAfter
	c.Next()
}

var (
	anyOrigin        = []string{"*"}
	exposeRetryAfter = []string{"Retry-After"}
)

// preflight answers the browser's OPTIONS check. Content-Type application/json
// is not a "simple" header, so a fetch() with JSON is preflighted;
// sendBeacon with text/plain is not.
func preflight(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	if req := c.GetHeader("Access-Control-Request-Headers"); req != "" {
		h.Set("Access-Control-Allow-Headers", req)
	} else {
		h.Set("Access-Control-Allow-Headers", "Content-Type")
	}
	h.Set("Access-Control-Max-Age", "86400")
	h.Add("Vary", "Access-Control-Request-Headers")
	c.AbortWithStatus(http.StatusNoContent)
}
