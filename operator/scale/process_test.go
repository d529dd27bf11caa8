package scale

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runtimeProcess is the runtime under measurement, in its own process.
type runtimeProcess struct {
	b      *testing.B
	cmd    *exec.Cmd
	addr   string
	stderr string
	done   chan error
}

// startRuntime starts this test binary again as the runtime against cp,
// with env added to its environment, and waits for its caches to sync.
func startRuntime(b *testing.B, cp *controlPlane, env ...string) *runtimeProcess {
	b.Helper()
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	p := &runtimeProcess{b: b, stderr: filepath.Join(b.TempDir(), "runtime.log"), done: make(chan error, 1)}
	logf, err := os.Create(p.stderr)
	if err != nil {
		b.Fatal(err)
	}
	p.cmd = exec.Command(self)
	p.cmd.Env = append(append(os.Environ(), envRuntime+"="+cp.kubeconfig), env...)
	p.cmd.Stderr = logf
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait(); _ = logf.Close() }()
	b.Cleanup(p.stop)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("the runtime process did not start: %v\n%s", err, p.log())
	}
	p.addr = strings.TrimSpace(strings.TrimPrefix(line, "stats "))
	p.waitFor("its caches to sync", time.Minute, func(st runtimeStats) bool { return st.Synced })
	return p
}

// stats reads the runtime's counters; gc=true collects first, for the live
// heap.
func (p *runtimeProcess) stats(gc bool) runtimeStats {
	p.b.Helper()
	url := "http://" + p.addr + "/stats"
	if gc {
		url += "?gc=1"
	}
	resp, err := http.Get(url)
	if err != nil {
		p.b.Fatalf("reading the runtime's stats: %v\n%s", err, p.log())
	}
	defer resp.Body.Close()
	var st runtimeStats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		p.b.Fatal(err)
	}
	return st
}

// saveProfile writes the runtime's heap profile to file.
func (p *runtimeProcess) saveProfile(file string) {
	p.b.Helper()
	resp, err := http.Get("http://" + p.addr + "/debug/pprof/heap?gc=1")
	if err != nil {
		p.b.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		err = os.WriteFile(file, b, 0o644)
	}
	if err != nil {
		p.b.Fatal(err)
	}
	p.b.Logf("heap profile: %s", file)
}

func (p *runtimeProcess) waitFor(what string, limit time.Duration, ok func(runtimeStats) bool) runtimeStats {
	p.b.Helper()
	deadline := time.Now().Add(limit)
	for {
		st := p.stats(false)
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			p.b.Fatalf("the runtime: timed out after %s waiting for %s (%+v)\n%s", limit, what, st, p.log())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// restingRSS is the lowest RSS sampled over d.
func (p *runtimeProcess) restingRSS(d time.Duration) uint64 {
	p.b.Helper()
	low := p.stats(false).RSS
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		low = min(low, p.stats(false).RSS)
	}
	return low
}

// idle waits until nothing is queued or running and no reconcile happened
// for quiet.
func (p *runtimeProcess) idle(quiet, limit time.Duration) runtimeStats {
	p.b.Helper()
	var last float64 = -1
	since := time.Now()
	return p.waitFor("the work queue to drain", limit, func(st runtimeStats) bool {
		if st.Queued > 0 || st.Active > 0 || st.Reconciles != last {
			last, since = st.Reconciles, time.Now()
			return false
		}
		return time.Since(since) >= quiet
	})
}

func (p *runtimeProcess) stop() {
	if p.cmd.ProcessState != nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// log is the tail of the runtime's standard error.
func (p *runtimeProcess) log() string {
	b, _ := os.ReadFile(p.stderr)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return fmt.Sprintf("runtime stderr (%s):\n%s", p.stderr, b)
}
