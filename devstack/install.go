package devstack

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// install makes sure the binaries of the wanted services exist. As root it
// installs the missing Debian packages (after one apt-get update); otherwise
// it names the one command a person should run.
func (l *layout) install(ctx context.Context, want []installable) error {
	var pkgs []string
	for _, s := range want {
		if missing, p := s.binaries(); len(missing) > 0 {
			l.logf("%s: missing %s", s.name(), strings.Join(missing, ", "))
			pkgs = append(pkgs, p...)
		}
	}
	if len(pkgs) == 0 {
		return nil
	}
	cmdline := "apt-get update && apt-get install -y " + strings.Join(pkgs, " ")
	if os.Geteuid() != 0 {
		return fmt.Errorf("devstack: missing servers; run as root: %s", cmdline)
	}
	l.logf("installing %s", strings.Join(pkgs, " "))
	logFile, err := os.Create(l.dir + "/apt.log")
	if err != nil {
		return fmt.Errorf("devstack: %w", err)
	}
	defer logFile.Close()
	for _, args := range [][]string{{"update"}, append([]string{"install", "-y", "--no-install-recommends"}, pkgs...)} {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		// The packages try to start their system services and are refused
		// where there is no init; that is harmless, we start our own.
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = logFile, logFile
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("devstack: apt-get %s failed (see %s/apt.log): %w", args[0], l.dir, err)
		}
	}
	for _, s := range want {
		if missing, _ := s.binaries(); len(missing) > 0 {
			return fmt.Errorf("devstack: %s still missing %s after install", s.name(), strings.Join(missing, ", "))
		}
	}
	return nil
}

// lookPath finds a binary on PATH or in the given directories.
func lookPath(name string, dirs ...string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range dirs {
		p := d + "/" + name
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// runLogged runs a command with its output appended to a log file, never to
// our own stdout: a detached server holding CI's stdout open would keep CI
// from ever finishing.
func runLogged(ctx context.Context, logPath string, name string, args ...string) error {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Stdin = nil
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w (log: %s)", name, strings.Join(args, " "), err, logPath)
	}
	return nil
}
