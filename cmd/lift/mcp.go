package main

import (
	"cmp"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/liftab/lift/api"
	v1 "github.com/liftab/lift/api/v1"
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
			s := mcpserver.New(&mcpserver.Client{BaseURL: baseURL, Token: token}, version())
			return s.Run(cmd.Context(), &mcp.StdioTransport{})
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
func mountMCP(r *gin.Engine, v *v1.API) {
	client := &mcpserver.Client{BaseURL: "http://lift.internal", HTTP: &http.Client{Transport: inProcess{r}}}
	server := mcpserver.New(client, version())
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true, MaxRequestBodyBytes: v.MaxBodyBytes})
	// The methods streamable HTTP defines (POST messages, GET the stream,
	// DELETE a session); any other falls through to the 404 every unknown
	// route answers, as the API document says.
	chain := []gin.HandlerFunc{api.UseSurface(api.SurfaceV1), api.LimitBody(v.MaxBodyBytes), api.LimitUnauthenticated(v.Limiter),
		api.Authenticate(v.Tokens), gin.WrapH(h)}
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		r.Handle(m, "/mcp", chain...)
	}
}

// inProcess is a RoundTripper that serves a request with a handler instead
// of the network.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context()) // a RoundTripper must not change its request
	req.RemoteAddr = "127.0.0.1:0"
	req.RequestURI = req.URL.RequestURI()
	if req.Body == nil {
		req.Body = http.NoBody // as a server's request always has one
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	return rec.Result(), nil
}
