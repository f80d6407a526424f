package devstack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
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

func (r *redis) stop(ctx context.Context) (bool, error) {
	return killPidFile(ctx, r.pidFile(), "redis-server")
}

// killPidFile sends SIGTERM to the process in a pid file when it is program
// and waits for it to exit, and reports whether there was one to stop. An
// absent file, a dead process, or one that is not program (the pid file
// outlived a reboot and the pid went to another process) is not running;
// the stale file is removed.
func killPidFile(ctx context.Context, path, program string) (bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, nil
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || !runs(pid, program) {
		os.Remove(path)
		return false, nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		os.Remove(path)
		return false, nil
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			os.Remove(path)
			return true, nil
		}
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return true, syscall.Kill(pid, syscall.SIGKILL)
}

// runs reports whether process pid's command line names program. Where
// /proc cannot say (not Linux), a live pid is taken as program.
func runs(pid int, program string) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if errors.Is(err, fs.ErrNotExist) {
		if _, statErr := os.Stat("/proc/self"); statErr == nil {
			return false // /proc works and has no such process
		}
		return syscall.Kill(pid, 0) == nil
	}
	return err == nil && bytes.Contains(cmdline, []byte(program))
}
