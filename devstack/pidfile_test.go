package devstack

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestKillPidFile: stack down stops the process its pid file names only
// when that process is the service; a pid file that outlived its process
// (a reboot gave the pid to another program) is stale, and that program
// lives on.
func TestKillPidFile(t *testing.T) {
	t.Parallel()
	// start runs sleep and reaps it as soon as it ends (an unreaped child
	// stays a zombie that signal 0 still finds).
	start := func(t *testing.T) (*exec.Cmd, string, <-chan *os.ProcessState) {
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Start returns when the child calls exec, which may not have
		// replaced its command line yet.
		for i := 0; i < 200 && !runs(cmd.Process.Pid, "sleep"); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		ended := make(chan *os.ProcessState, 1)
		go func() { cmd.Wait(); ended <- cmd.ProcessState }()
		t.Cleanup(func() { cmd.Process.Kill() })
		path := filepath.Join(t.TempDir(), "x.pid")
		if err := os.WriteFile(path, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return cmd, path, ended
	}
	t.Run("another program", func(t *testing.T) {
		cmd, path, _ := start(t)
		stopped, err := killPidFile(context.Background(), path, "redis-server")
		if stopped || err != nil {
			t.Fatalf("killPidFile = %v, %v; want not running", stopped, err)
		}
		if syscall.Kill(cmd.Process.Pid, 0) != nil {
			t.Error("the other program was signalled")
		}
		if _, err := os.Stat(path); err == nil {
			t.Error("the stale pid file is still there")
		}
	})
	t.Run("the service", func(t *testing.T) {
		_, path, ended := start(t)
		stopped, err := killPidFile(context.Background(), path, "sleep")
		if !stopped || err != nil {
			t.Fatalf("killPidFile = %v, %v; want stopped", stopped, err)
		}
		if state := <-ended; state.Exited() || state.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
			t.Errorf("process state %v, want ended by SIGTERM", state)
		}
	})
	t.Run("no pid file", func(t *testing.T) {
		if stopped, err := killPidFile(context.Background(), filepath.Join(t.TempDir(), "none.pid"), "sleep"); stopped || err != nil {
			t.Fatalf("killPidFile = %v, %v; want not running", stopped, err)
		}
	})
}
