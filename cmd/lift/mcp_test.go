package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/liftab/lift/lifttest"
)

// TestMain lets a test run the real `lift mcp` as a child process: the test
// binary re-executed with liftMainEnv set is the lift binary.
func TestMain(m *testing.M) {
	if os.Getenv(liftMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const liftMainEnv = "LIFT_TEST_RUN_MAIN"

// mcpTools are the tools a client must see: one per v1 operation.
var mcpTools = []string{"archive_test", "create_export", "create_result_query", "end_test", "get_export", "get_result_query",
	"get_results", "get_test", "list_tests", "pause_test", "resume_test", "start_test"}

// stdioSession runs `lift mcp --url s.url` with token in a child process
// and connects an MCP client to its stdin/stdout.
func stdioSession(t *testing.T, s *server, token string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(os.Args[0], "mcp", "--url", s.url)
	cmd.Env = append(os.Environ(), liftMainEnv+"=1", "LIFT_MCP_TOKEN="+token)
	cmd.Stderr = os.Stderr
	return connect(t, &mcp.CommandTransport{Command: cmd})
}

// httpSession connects an MCP client to s's /mcp with token.
func httpSession(t *testing.T, s *server, token string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: bearer{token, http.DefaultTransport}}
	return connect(t, &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true})
}

func connect(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "lift-test", Version: "0"}, nil)
	cs, err := c.Connect(ctx, tr, nil) // initialize
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// call calls tool and returns its text contents and whether it is a tool
// error; a protocol error fails the test.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args any) (texts []string, isError bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return texts, res.IsError
}

// TestMCP: over stdio (the real `lift mcp` command against a real server)
// and over /mcp, a client initializes, lists the tools and lists the shop's
// tests; v1 refusals come back as tool errors carrying v1's code.
func TestMCP(t *testing.T) {
	s := newServer(t)
	shop, read, write := s.shop(true)
	var ids []string
	for _, name := range []string{"mcp-a", "mcp-b"} {
		r := s.do("POST", "/v1/experiments", write, themeTestBody(name))
		if r.status != 201 {
			t.Fatalf("create: %d %s", r.status, r.raw)
		}
		ids = append(ids, r.body["id"].(string))
	}
	transports := map[string]func(*testing.T, *server, string) *mcp.ClientSession{"stdio": stdioSession, "http": httpSession}
	for name, session := range transports {
		t.Run(name, func(t *testing.T) {
			cs := session(t, s, read)
			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
				if tool.Description == "" || tool.InputSchema == nil {
					t.Errorf("%s: no description or input schema", tool.Name)
				}
			}
			slices.Sort(names)
			if !slices.Equal(names, mcpTools) {
				t.Errorf("tools = %v, want %v", names, mcpTools)
			}

			texts, isErr := call(t, cs, "list_tests", map[string]any{"limit": 10})
			if isErr || len(texts) != 1 {
				t.Fatalf("list_tests: error=%v %v", isErr, texts)
			}
			var list struct {
				Data []struct{ ID, Name string } `json:"data"`
			}
			if err := json.Unmarshal([]byte(texts[0]), &list); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range list.Data {
				got = append(got, d.ID+":"+d.Name)
			}
			slices.Sort(got)
			if want := []string{ids[0] + ":mcp-a", ids[1] + ":mcp-b"}; !slices.Equal(got, want) {
				t.Errorf("list_tests = %v, want %v", got, want)
			}

			texts, _ = call(t, cs, "get_test", map[string]any{"id": ids[0]})
			if !strings.Contains(texts[0], `"name":"mcp-a"`) {
				t.Errorf("get_test = %v", texts)
			}
			wantToolError(t, cs, "get_test", map[string]any{"id": "999999999"}, "experiment_not_found")
			// A read token may not start a test: v1's 403 is the tool's answer.
			wantToolError(t, cs, "start_test", map[string]any{"id": ids[0]}, "insufficient_scope")
		})
	}

	t.Run("stdio bad token", func(t *testing.T) {
		cs := stdioSession(t, s, "not-a-token")
		wantToolError(t, cs, "list_tests", map[string]any{}, "invalid_token")
	})
	t.Run("stdio server unreachable", func(t *testing.T) {
		cmd := exec.Command(os.Args[0], "mcp", "--url", "http://"+deadAddr(t))
		cmd.Env = append(os.Environ(), liftMainEnv+"=1", "LIFT_MCP_TOKEN="+read)
		cs := connect(t, &mcp.CommandTransport{Command: cmd})
		if texts, isErr := call(t, cs, "list_tests", map[string]any{}); !isErr || !strings.Contains(texts[0], "connect") {
			t.Errorf("list_tests: error=%v %v, want a tool error naming the connection", isErr, texts)
		}
	})
	t.Run("stdio calls piped in are all answered", func(t *testing.T) {
		// The SDK ended the session at EOF, or at a line it cannot read,
		// and dropped what was in flight: a script piping its calls in got
		// one answer or none (MCP audit M12, review-3 R1, R2).
		calls := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":1,"method":"ping"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_test","arguments":{"id":"` + ids[0] + `"}}}
`
		for name, input := range map[string]string{"then EOF": calls, "then a line that is not JSON": calls + "xyz\n"} {
			cmd := exec.Command(os.Args[0], "mcp", "--url", s.url)
			cmd.Env = append(os.Environ(), liftMainEnv+"=1", "LIFT_MCP_TOKEN="+read)
			cmd.Stdin = strings.NewReader(input)
			out, _ := cmd.Output() // the unreadable line ends it with an error, after the answers
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				var m struct {
					ID     json.RawMessage `json:"id"`
					Result json.RawMessage `json:"result"`
				}
				if json.Unmarshal([]byte(line), &m) == nil && m.Result != nil {
					got = append(got, string(m.ID))
				}
			}
			if !slices.Equal(got, []string{"0", "1", "2"}) || !strings.Contains(string(out), "mcp-a") {
				t.Errorf("%s: answers to ids %v, want 0, 1 and 2 (get_test naming mcp-a):\n%s", name, got, out)
			}
		}
	})
	t.Run("stdio url without a scheme", func(t *testing.T) {
		cmd := exec.Command(os.Args[0], "mcp", "--url", "localhost:8080")
		cmd.Env = append(os.Environ(), liftMainEnv+"=1", "LIFT_MCP_TOKEN="+read)
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "must be an http:// or https:// URL") {
			t.Errorf("lift mcp --url localhost:8080: %v %s, want it refused at start", err, out)
		}
	})
	t.Run("http no token", func(t *testing.T) {
		r := s.do("POST", "/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Content-Type", "application/json")
		wantError(t, r, 401, "authentication_error", "missing_token", nil)
	})
	t.Run("http write token acts on a test", func(t *testing.T) {
		// The inner v1 request takes the /mcp request's id: the audit
		// record of the change carries the caller's correlation id.
		r := s.do("POST", "/mcp", write, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"archive_test","arguments":{"id":"`+ids[1]+`"}}}`,
			"Content-Type", "application/json", "Accept", "application/json, text/event-stream", "X-Correlation-Id", "mcp-corr-1")
		if r.status != 200 || !strings.Contains(string(r.raw), `\"status\":\"archived\"`) {
			t.Fatalf("archive_test: %d %s", r.status, r.raw)
		}
		if n := s.countWhere("SELECT count(*) FROM audit_log WHERE request_id = $1", "mcp-corr-1"); n != 1 {
			t.Errorf("%d audit records carry the /mcp request's id, want 1", n)
		}
	})
	t.Run("http export link on the host the caller reached", func(t *testing.T) {
		// v1 builds the link from the request's host (no public URL set);
		// the in-process call must not invent one (MCP audit M1).
		tt := lifttest.RunningTest(shop.ID, "exported", time.Now().UTC().Add(-time.Hour))
		lifttest.PutTest(t, s.app.DB, tt)
		cs := httpSession(t, s, read)
		texts, isErr := call(t, cs, "create_export", map[string]any{"id": strconv.FormatInt(tt.ID, 10)})
		var export struct{ ID string }
		if isErr || json.Unmarshal([]byte(texts[0]), &export) != nil || export.ID == "" {
			t.Fatalf("create_export: error=%v %v", isErr, texts)
		}
		if err := s.app.results().RunExport(context.Background(), shop.ID, export.ID, true); err != nil {
			t.Fatal(err)
		}
		texts, isErr = call(t, cs, "get_export", map[string]any{"export_id": export.ID})
		var got struct {
			DownloadURL string `json:"download_url"`
		}
		if isErr || json.Unmarshal([]byte(texts[0]), &got) != nil || !strings.HasPrefix(got.DownloadURL, s.url+"/v1/exports/"+export.ID+"/download?") {
			t.Fatalf("get_export: error=%v %v, want a download_url on %s", isErr, texts, s.url)
		}
		if r := s.do("GET", strings.TrimPrefix(got.DownloadURL, s.url), "", ""); r.status != 200 {
			t.Errorf("the link answers %d %s", r.status, r.raw)
		}
	})
}

// wantToolError calls tool and wants an IsError result whose first line
// names v1's code.
func wantToolError(t *testing.T, cs *mcp.ClientSession, tool string, args any, code string) {
	t.Helper()
	texts, isErr := call(t, cs, tool, args)
	if !isErr || len(texts) == 0 || !strings.HasPrefix(texts[0], code+": ") {
		t.Errorf("%s: error=%v %v, want a tool error %s", tool, isErr, texts, code)
	}
}

// TestMCPServerLayout: the tools are a client of v1, so their package needs
// no storage adapter and no surface of this module.
func TestMCPServerLayout(t *testing.T) {
	r := layoutRule{name: "mcpserver is a v1 client", from: within("mcpserver"),
		to: []string{own("store"), own("warehouse"), own("api"), own("platform"), own("jobs"), pgxPath, clickhousePath, asynqPath}}
	for _, edge := range r.violations(listPackages(t)) {
		t.Errorf("forbidden edge %s", edge)
	}
}

// TestMCPTransportErrors: what the MCP transport refuses before any tool
// runs is answered in v1's envelope, as JSON, like every other refusal of
// /mcp (the SDK wrote them as text/plain: fuzz audit Z7); GET and DELETE,
// which a stateless server does not offer, answer 405 as the transport
// specifies, and a JSON-RPC error stays a JSON-RPC answer.
func TestMCPTransportErrors(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	_, read, _ := s.shop(true)
	const list = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for _, c := range []struct {
		name, method, contentType, body string
		status                          int
		code                            string
	}{
		{"not JSON", "POST", "application/json", "{", 400, "malformed_json"},
		{"not a JSON-RPC message", "POST", "application/json", `[1,2]`, 400, "malformed_json"},
		{"form content type", "POST", "text/plain", list, 400, "invalid_request"},
		{"no such JSON-RPC method", "POST", "application/json", `{"jsonrpc":"2.0","id":7,"method":"no/such"}`, 400, "invalid_request"},
		{"GET has no stream", "GET", "", "", 405, "method_not_allowed"},
		{"DELETE has no session", "DELETE", "", "", 405, "method_not_allowed"},
		{"PUT", "PUT", "application/json", list, 405, "method_not_allowed"},
		{"OPTIONS", "OPTIONS", "", "", 405, "method_not_allowed"},
		{"TRACE", "TRACE", "", "", 405, "method_not_allowed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.do(c.method, "/mcp", read, c.body, "Content-Type", c.contentType, "Accept", "application/json, text/event-stream")
			wantError(t, r, c.status, "invalid_request_error", c.code, nil)
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q, want JSON", ct)
			}
			if c.status == 405 && r.header.Get("Allow") != "POST" {
				t.Errorf("Allow %q, want POST", r.header.Get("Allow"))
			}
		})
	}
	t.Run("body over the limit without a length", func(t *testing.T) {
		big := io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"`),
			strings.NewReader(strings.Repeat("x", 11<<20)), strings.NewReader(`"}}`))
		req, err := http.NewRequest("POST", s.url+"/mcp", big) // unknown length: sent chunked
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+read)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		wantError(t, s.roundTrip(req), 413, "invalid_request_error", "request_too_large", nil)
	})
	t.Run("HEAD as GET", func(t *testing.T) {
		if r := s.do("HEAD", "/mcp", read, ""); r.status != 405 || r.header.Get("Allow") != "POST" {
			t.Errorf("HEAD: %d Allow %q, want 405 Allow POST", r.status, r.header.Get("Allow"))
		}
	})
	t.Run("giant body without a token is a 401, as on v1", func(t *testing.T) {
		r := s.do("POST", "/mcp", "", strings.Repeat(" ", 11<<20)+list, "Content-Type", "application/json")
		wantError(t, r, 401, "authentication_error", "missing_token", nil)
	})
	t.Run("unknown tool stays JSON-RPC", func(t *testing.T) {
		r := s.do("POST", "/mcp", read, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`,
			"Content-Type", "application/json", "Accept", "application/json, text/event-stream")
		if e, _ := r.body["error"].(map[string]any); r.status != 200 || r.body["id"] != float64(7) || e["code"] == nil {
			t.Errorf("got %d %s, want 200 with a JSON-RPC error for id 7", r.status, r.raw)
		}
	})
}

// TestEnvelopeErrorsByStatus: each plain-text status the transport may
// write keeps its meaning in the envelope: a server fault stays a 500 a
// client may retry (it was a 400 invalid_request: review-2 #7), a missing
// session a 404, and a success passes through untouched.
func TestEnvelopeErrorsByStatus(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status     int
		want       int
		typ, code  string
		passesOver bool
	}{
		{http.StatusInternalServerError, 500, "api_error", "internal_error", false},
		{http.StatusNotFound, 404, "not_found_error", "not_found", false},
		{http.StatusUnsupportedMediaType, 400, "invalid_request_error", "invalid_request", false},
		{http.StatusOK, 200, "", "", true},
	} {
		r := gin.New()
		r.POST("/mcp", envelopeErrors(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if c.status == http.StatusOK {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
				return
			}
			http.Error(w, "transport says no", c.status)
		})))
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest("POST", "/mcp", strings.NewReader("{}")))
		var body struct {
			Error struct{ Type, Code string } `json:"error"`
		}
		json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != c.want || body.Error.Type != c.typ || body.Error.Code != c.code ||
			!strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") ||
			c.passesOver != strings.Contains(rec.Body.String(), `"jsonrpc"`) {
			t.Errorf("transport %d: got %d %s (%s), want %d %s/%s", c.status, rec.Code, rec.Body, rec.Header().Get("Content-Type"), c.want, c.typ, c.code)
		}
	}
}
