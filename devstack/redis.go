package devstack

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type redis struct {
	l       *layout
	persist bool
}

func (r *redis) name() string    { return "redis" }
func (r *redis) dir() string     { return filepath.Join(r.l.dir, "redis") }
func (r *redis) pidFile() string { return filepath.Join(r.dir(), "redis.pid") }

func (r *redis) binaries() ([]string, []string) {
	if lookPath("redis-server") == "" {
		return []string{"redis-server"}, []string{"redis-server"}
	}
	return nil, nil
}

func (r *redis) ready(ctx context.Context) bool {
	// A raw PING: a client library would log its failed dials to stderr.
	var d net.Dialer
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", RedisPort))
	if err != nil {
		return false
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	buf := make([]byte, 7)
	n, _ := io.ReadFull(conn, buf)
	return string(buf[:n]) == "+PONG\r\n"
}

func (r *redis) start(ctx context.Context) error {
	if err := os.MkdirAll(r.dir(), 0o755); err != nil {
		return err
	}
	aof := "no"
	if r.persist {
		aof = "yes"
	}
	// 256 databases so each test package can have one of its own.
	return runLogged(ctx, filepath.Join(r.dir(), "start.log"), lookPath("redis-server"),
		"--port", strconv.Itoa(RedisPort), "--bind", "127.0.0.1", "--daemonize", "yes",
		"--pidfile", r.pidFile(), "--logfile", filepath.Join(r.dir(), "redis.log"),
		"--dir", r.dir(), "--save", "", "--appendonly", aof, "--databases", "256")
}

func (r *redis) stop(ctx context.Context) error {
	return killPidFile(ctx, r.pidFile())
}

// killPidFile sends SIGTERM to the process in a pid file and waits for it to
// exit; an absent file or a dead process is already stopped.
func killPidFile(ctx context.Context, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		os.Remove(path)
		return nil
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			os.Remove(path)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return syscall.Kill(pid, syscall.SIGKILL)
}
