package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/liftab/lift/mcpserver"
)

// drainingStdio is the SDK's stdio transport, except that the end of its
// input does not end the session while requests read before it are still
// unanswered. The SDK closes the session at EOF and drops what is in
// flight, so a script that piped three calls into `lift mcp` and closed
// stdin got one answer or none, and a write tool's outcome was unknown
// (MCP audit M12). Messages are read here, counted and handed on; at EOF
// the input stays open until as many answers as requests have been
// written, or until a call could no longer be running.
type drainingStdio struct {
	in  io.Reader
	out io.Writer
}

// drainWait bounds the wait for answers after EOF: a v1 call gives up
// after mcpserver.DefaultTimeout.
const drainWait = mcpserver.DefaultTimeout + 5*time.Second

func (t drainingStdio) Connect(ctx context.Context) (mcp.Connection, error) {
	pr, pw := io.Pipe()
	answers := &answerCounter{w: t.out, changed: make(chan struct{}, 1)}
	go func() {
		dec := json.NewDecoder(t.in)
		var asked int
		for {
			var msg json.RawMessage
			if err := dec.Decode(&msg); err != nil {
				if err != io.EOF {
					// Not JSON: the SDK answers it, from here on, as it
					// would have.
					io.Copy(pw, io.MultiReader(dec.Buffered(), t.in))
				}
				break
			}
			asked += countRequests(msg)
			if _, err := pw.Write(append(msg, '\n')); err != nil {
				return // the session is closed
			}
		}
		answers.waitFor(ctx, asked, drainWait)
		pw.Close()
	}()
	return (&mcp.IOTransport{Reader: pr, Writer: nopWriteCloser{answers}}).Connect(ctx)
}

// countRequests is how many answers msg asks for: one per request (a
// message with a method and an id), none for a notification.
func countRequests(msg json.RawMessage) int {
	var batch []json.RawMessage
	if json.Unmarshal(msg, &batch) == nil {
		n := 0
		for _, m := range batch {
			n += countRequests(m)
		}
		return n
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method == "" || len(m.ID) == 0 || string(m.ID) == "null" {
		return 0
	}
	return 1
}

// answerCounter writes the SDK's messages (one Write each) and counts the
// answers among them.
type answerCounter struct {
	w       io.Writer
	mu      sync.Mutex
	n       int
	changed chan struct{}
}

func (a *answerCounter) Write(p []byte) (int, error) {
	n, err := a.w.Write(p)
	if k := countAnswers(bytes.TrimSpace(p)); k > 0 {
		a.mu.Lock()
		a.n += k
		a.mu.Unlock()
		select {
		case a.changed <- struct{}{}:
		default:
		}
	}
	return n, err
}

func countAnswers(msg []byte) int {
	var batch []json.RawMessage
	if json.Unmarshal(msg, &batch) == nil {
		n := 0
		for _, m := range batch {
			n += countAnswers(m)
		}
		return n
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "" || len(m.ID) == 0 || (m.Result == nil && m.Error == nil) {
		return 0
	}
	return 1
}

// waitFor returns once want answers were written, ctx ends or max passes.
func (a *answerCounter) waitFor(ctx context.Context, want int, max time.Duration) {
	deadline := time.NewTimer(max)
	defer deadline.Stop()
	for {
		a.mu.Lock()
		done := a.n >= want
		a.mu.Unlock()
		if done {
			return
		}
		select {
		case <-a.changed:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
