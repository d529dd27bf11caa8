package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

// shell runs `sh -c script` in dir with KUBECONFIG set to the cluster the
// spec runs on, and returns the combined output and the exit code.
func (k *kube) shell(ctx context.Context, script, dir string, stdin string) (string, int, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBECONFIG="+k.kubeconfig)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0, nil
	case errors.As(err, &exit) && ctx.Err() == nil:
		return out.String(), exit.ExitCode(), nil
	case ctx.Err() != nil:
		return out.String(), -1, fmt.Errorf("%q did not finish before the expectation's timeout", script)
	}
	return out.String(), -1, fmt.Errorf("running %q: %w", script, err)
}

// notFound matches sh's report of a command it cannot find.
var notFound = regexp.MustCompile(`(?m)(?:^|: )([A-Za-z0-9_.-]+): (?:command )?not found`)

// checkCommand runs a commands: entry and asserts its exit code and output
// (upstream's checkCommand). A program the script needs that is not on
// PATH (exit 127) cannot run here: the expectation is skipped, naming it.
func (k *kube) checkCommand(ctx context.Context, c *Command, dir string) error {
	out, code, err := k.shell(ctx, c.Run, dir, "")
	if err != nil {
		return err
	}
	if code == 127 && c.ExitCode != 127 {
		if m := notFound.FindStringSubmatch(out); m != nil {
			return cannotRunf("the command %q needs %s, which is not on PATH", firstLine(c.Run), m[1])
		}
	}
	if code != c.ExitCode {
		return fmt.Errorf("command %q: exit code %d, want %d\noutput: %s", firstLine(c.Run), code, c.ExitCode, strings.TrimSpace(out))
	}
	if err := c.Assert.Check(out); err != nil {
		return fmt.Errorf("command %q: %w\noutput: %s", firstLine(c.Run), err, strings.TrimSpace(out))
	}
	return nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
