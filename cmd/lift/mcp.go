package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/liftab/lift/api"
	v1 "github.com/liftab/lift/api/v1"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/mcpserver"
)

func init() { rootCmd.AddCommand(newMCPCmd()) }

// newMCPCmd is `lift mcp`: an MCP server on stdin/stdout for an assistant
// that runs it as a subprocess. It holds no connection of its own: every
// tool is a v1 request to the Lift at --url with the token.
func newMCPCmd() *cobra.Command {
	var baseURL, token string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve Lift's v1 API as MCP tools over stdio (a client of a running Lift)",
		Long: "Serve an MCP server on stdin/stdout whose tools (list_tests, get_test, get_results,\n" +
			"create_result_query, get_result_query, create_export, get_export, start_test, pause_test,\n" +
			"resume_test, end_test, archive_test) call the v1 API of the Lift at --url with a bearer\n" +
			"token. The token may come from LIFT_MCP_TOKEN instead of --token (kept out of ps).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			token = cmp.Or(token, os.Getenv("LIFT_MCP_TOKEN"))
			if baseURL == "" || token == "" {
				return errors.New("mcp: --url and --token (or LIFT_MCP_TOKEN) are required")
			}
			// Said now, not on every tool call as "unsupported protocol
			// scheme" (MCP audit M12).
			if u, err := url.Parse(baseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("mcp: --url %q must be an http:// or https:// URL, like https://lift.example.com", baseURL)
			}
			s, err := mcpserver.New(&mcpserver.Client{BaseURL: baseURL, Token: token}, version(), v1.OpenAPI())
			if err != nil {
				return err
			}
			return s.Run(cmd.Context(), drainingStdio{})
		},
	}
	cmd.Flags().StringVar(&baseURL, "url", "", "the Lift server (https://lift.example.com; a trailing /v1 is fine)")
	cmd.Flags().StringVar(&token, "token", "", "a v1 bearer token (read or write scope)")
	return cmd
}

// mountMCP serves the same tools over streamable HTTP at /mcp, behind the
// same body limit, refused-auth budget and bearer auth as /v1. The tools
// forward the caller's Authorization header to the v1 routes of engine,
// called in process: every tool call then passes v1's scope checks, rate
// limits, idempotency and audit exactly as a direct API call would, with
// no second path into the services to keep in step.
//
// Stateless: any api node answers any request, so no session lives in one
// process's memory behind a load balancer. Localhost protection is off
// because it guards unauthenticated local servers from DNS rebinding; this
// endpoint needs a bearer token, and behind a local reverse proxy every
// request arrives from 127.0.0.1 with the public Host.
func mountMCP(r *gin.Engine, v *v1.API) error {
	client := &mcpserver.Client{BaseURL: "http://lift.internal", HTTP: &http.Client{Transport: inProcess{r}}}
	server, err := mcpserver.New(client, version(), v1.OpenAPI())
	if err != nil {
		return err
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true, MaxRequestBodyBytes: v.MaxBodyBytes})
	// v1's order: a giant body without a token is a 401, not a 413.
	chain := []gin.HandlerFunc{api.UseSurface(api.SurfaceV1), api.LimitUnauthenticated(v.Limiter), api.Authenticate(v.Tokens),
		api.LimitBody(v.MaxBodyBytes)}
	r.POST("/mcp", append(chain, keepOrigin, envelopeErrors(h))...)
	// Streamable HTTP also defines GET (a server-sent stream) and DELETE
	// (end a session). A stateless server has neither, and the transport
	// says to answer GET 405 then; so does every other method but POST.
	noStream := api.Handle(func(c *gin.Context) error {
		c.Header("Allow", http.MethodPost)
		return experiment.Errorf(experiment.KindMethodNotAllowed, "method_not_allowed",
			"/mcp is stateless: POST each JSON-RPC message; there is no stream to GET and no session to DELETE.")
	})
	r.Match([]string{http.MethodGet, http.MethodHead, http.MethodDelete, http.MethodPut, http.MethodPatch, http.MethodOptions, http.MethodTrace},
		"/mcp", append(chain, noStream)...)
	return nil
}

// origin is what a tool's in-process v1 request keeps of the /mcp request
// it serves: the host and TLS it reached (v1 builds export download links
// from them when http.public_url is unset; a made-up host gave links
// nobody could open: MCP audit M1) and its request id, which the v1
// request takes as its own (X-Correlation-Id), so an operator finds both
// in the log under one id.
type origin struct {
	host, requestID string
	tls             *tls.ConnectionState
}

type originKey struct{}

// keepOrigin puts the request's origin in its context, which the MCP SDK
// hands on to the tool handlers (stateless mode) and so to inProcess.
func keepOrigin(c *gin.Context) {
	o := origin{host: c.Request.Host, tls: c.Request.TLS, requestID: api.RequestID(c)}
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), originKey{}, o))
	c.Next()
}

// envelopeErrors serves h, the MCP SDK's handler, but answers the plain-text
// errors its transport writes (a body that is not a JSON-RPC message, the
// wrong Content-Type, a body over the limit) in v1's envelope, as every
// other refusal of /mcp is answered (fuzz audit Z7). JSON-RPC answers,
// errors included, pass through.
func envelopeErrors(h http.Handler) gin.HandlerFunc {
	return func(c *gin.Context) {
		w := &plainErrorCatcher{ResponseWriter: c.Writer}
		h.ServeHTTP(w, c.Request)
		if w.status == 0 {
			return
		}
		c.Writer.Header().Del("Content-Type") // the SDK's text/plain, or the envelope would keep it
		msg := strings.TrimSpace(w.body.String())
		switch {
		case w.status >= 500:
			// A fault of the server, not the client's: the generic 500,
			// logged with the SDK's words, that a client may retry.
			api.WriteError(c, fmt.Errorf("mcp transport: %d %s", w.status, msg))
		case w.status == http.StatusNotFound:
			api.WriteError(c, experiment.Errorf(experiment.KindNotFound, "not_found", "%s.", strings.TrimSuffix(msg, ".")))
		case w.status == http.StatusRequestEntityTooLarge:
			api.WriteError(c, api.TooLarge(c))
		case w.status == http.StatusBadRequest:
			if strings.HasPrefix(msg, "malformed payload") {
				api.WriteError(c, api.Invalid("malformed_json", "", "The body is not a JSON-RPC message: %s.", msg))
				return
			}
			fallthrough
		default: // a method the server has not, a Content-Type that is not JSON, …
			api.WriteError(c, api.Invalid("invalid_request", "", "%s.", strings.TrimSuffix(msg, ".")))
		}
	}
}

// plainErrorCatcher passes a response through unless it is an error the
// transport wrote as text/plain (http.Error); that one it keeps for
// envelopeErrors.
type plainErrorCatcher struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *plainErrorCatcher) WriteHeader(code int) {
	if code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.status = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *plainErrorCatcher) Write(b []byte) (int, error) {
	if w.status != 0 {
		return w.body.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

func (w *plainErrorCatcher) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.status == 0 {
		f.Flush()
	}
}

// inProcess is a RoundTripper that serves a request with a handler instead
// of the network.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context()) // a RoundTripper must not change its request
	req.RemoteAddr = "127.0.0.1:0"
	req.RequestURI = req.URL.RequestURI()
	if o, ok := req.Context().Value(originKey{}).(origin); ok {
		req.Host, req.TLS = o.host, o.tls
		req.Header.Set("X-Correlation-Id", o.requestID)
	}
	// The network server refuses a request line and header over its limit
	// with 431 before any handler; so must this stand-in (MCP audit M6).
	if size := len(req.RequestURI) + headerBytes(req.Header); size > http.DefaultMaxHeaderBytes {
		return &http.Response{StatusCode: http.StatusRequestHeaderFieldsTooLarge, Status: "431 Request Header Fields Too Large",
			Header: http.Header{}, Body: io.NopCloser(strings.NewReader("431 Request Header Fields Too Large: the tool's arguments make a request line over 1 MB")),
			Request: req}, nil
	}
	if req.Body == nil {
		req.Body = http.NoBody // as a server's request always has one
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

func headerBytes(h http.Header) int {
	n := 0
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}
