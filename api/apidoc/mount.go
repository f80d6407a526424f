package apidoc

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"net/http"

	"github.com/gin-gonic/gin"
)

// The renderer: Redoc's standalone bundle, pinned by web/package.json and
// its lockfile and copied by `make docs-assets`, so serving it needs no npm.
//
//go:embed assets/redoc.standalone.js assets/redoc.standalone.js.LICENSE.txt
var assets embed.FS

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Lift API reference</title>
<style>body{margin:0}</style>
</head>
<body>
<redoc spec-url="/openapi.json" hide-download-button="false" expand-responses="200,202"></redoc>
<script src="/docs/redoc.standalone.js"></script>
</body>
</html>
`

// csp lets the page run only this origin's script; Redoc styles with
// inline <style> tags and searches in a blob: worker.
const csp = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; worker-src 'self' blob:; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

// Mount serves GET /openapi.json, GET /docs and the renderer's files, none
// behind a credential: they describe the API and hold no shop's data.
func Mount(r gin.IRouter) {
	r.GET("/openapi.json", func(c *gin.Context) {
		doc, err := Document()
		if err != nil {
			c.JSON(http.StatusInternalServerError, gin.H{"status": "error", "message": "the API document could not be built"})
			return
		}
		serve(c, "application/json; charset=utf-8", doc, "no-cache")
	})
	r.GET("/docs", func(c *gin.Context) {
		c.Header("Content-Security-Policy", csp)
		serve(c, "text/html; charset=utf-8", []byte(page), "no-cache")
	})
	r.GET("/docs/:asset", func(c *gin.Context) {
		b, err := assets.ReadFile("assets/" + c.Param("asset"))
		if err != nil {
			c.JSON(http.StatusNotFound, gin.H{"status": "error", "message": "not found"})
			return
		}
		ct := "text/javascript; charset=utf-8"
		if c.Param("asset") != "redoc.standalone.js" {
			ct = "text/plain; charset=utf-8"
		}
		serve(c, ct, b, "public, max-age=86400")
	})
}

// serve answers body with a strong ETag, and 304 when the client has it.
func serve(c *gin.Context, contentType string, body []byte, cacheControl string) {
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	c.Header("ETag", etag)
	c.Header("Cache-Control", cacheControl)
	if c.GetHeader("If-None-Match") == etag {
		c.Status(http.StatusNotModified)
		return
	}
	c.Data(http.StatusOK, contentType, body)
}
