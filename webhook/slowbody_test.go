package webhook

import (
	"crypto/tls"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// slowBodies keeps n connections to a webhook, each a POST /convert that
// declares slowDeclared bytes and sends one byte of body per period, as
// issue 28's reproduction did. A connection the server answers or closes is
// opened again, so that n stay open whatever the server does to them.
type slowBodies struct {
	t        testing.TB
	ts       *testServer
	period   time.Duration
	declared int // Content-Length
	burst    int // bytes sent at once after the headers
	stop     chan struct{}
	wg       sync.WaitGroup

	opened   atomic.Int64 // connections opened
	started  atomic.Int64 // connections that sent their first body byte
	answered atomic.Int64 // connections the server answered or closed
	mu       sync.Mutex
	answers  map[string]int // status line and error of the server's answers
}

// startSlowBodies opens n slow bodies against ts, each declaring declared
// bytes; each sends burst bytes (at least one) at once, then one byte per
// period. It returns once every connection has sent its first bytes.
func startSlowBodies(t testing.TB, ts *testServer, n, declared, burst int, period time.Duration) *slowBodies {
	t.Helper()
	s := &slowBodies{t: t, ts: ts, period: period, declared: declared, burst: max(burst, 1), stop: make(chan struct{}), answers: map[string]int{}}
	for i := range n {
		s.wg.Add(1)
		go s.run(i)
	}
	t.Cleanup(s.close)
	deadline := time.Now().Add(30 * time.Second)
	for s.started.Load() < int64(n) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d slow bodies started after 30s", s.started.Load(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return s
}

func (s *slowBodies) close() {
	select {
	case <-s.stop:
		return
	default:
	}
	close(s.stop)
	s.wg.Wait()
}

func (s *slowBodies) run(i int) {
	defer s.wg.Done()
	host := strings.TrimSuffix(strings.TrimPrefix(s.ts.convert, "https://"), "/convert")
	head := fmt.Appendf(nil, "POST /convert HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", host, s.declared)
	first := true
	for {
		select {
		case <-s.stop:
			return
		default:
		}
		c, err := tls.Dial("tcp", host, &tls.Config{RootCAs: s.ts.ca.pool(), NextProtos: []string{"http/1.1"}})
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		s.opened.Add(1)
		s.trickle(c, head, first)
		first = false
		_ = c.Close()
		select { // a new connection a period later
		case <-s.stop:
			return
		case <-time.After(s.period):
		}
	}
}

// trickle sends the request on c until the server answers or closes it, or
// the attack stops.
func (s *slowBodies) trickle(c net.Conn, head []byte, first bool) {
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		buf := make([]byte, 1024)
		n, err := io.ReadAtLeast(c, buf, 1)
		line, _, _ := strings.Cut(string(buf[:n]), "\r\n")
		switch {
		case err != nil && n == 0:
			line = "closed"
		case strings.Contains(string(buf[:n]), "request body evicted"):
			line += ": evicted"
		}
		select {
		case <-s.stop:
			return // closed by us
		default:
		}
		s.mu.Lock()
		s.answers[line]++
		s.mu.Unlock()
	}()
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(append(head, strings.Repeat(" ", s.burst)...)); err != nil {
		return
	}
	if first {
		s.started.Add(1)
	}
	// The first byte of each connection comes at a random point of the
	// period, so that the attack is spread over it.
	next := time.After(time.Duration(rand.Int64N(int64(s.period))))
	for {
		select {
		case <-s.stop:
			return
		case <-answered:
			s.answered.Add(1)
			return
		case <-next:
		}
		_ = c.SetWriteDeadline(time.Now().Add(s.period))
		if _, err := c.Write([]byte{' '}); err != nil {
			<-answered
			s.answered.Add(1)
			return
		}
		next = time.After(s.period)
	}
}

// summary says what the server did to the slow bodies.
func (s *slowBodies) summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.answers))
	for k := range s.answers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d× %q", s.answers[k], k))
	}
	return fmt.Sprintf("%d connections opened, %d answered or closed by the server: %s", s.opened.Load(), s.answered.Load(), strings.Join(parts, ", "))
}

// timedReview posts body to ts and returns how long the answer took; the
// review must succeed.
func timedReview(t testing.TB, ts *testServer, body []byte) time.Duration {
	t.Helper()
	start := time.Now()
	code, out := ts.post(t, body)
	took := time.Since(start)
	if code != http.StatusOK {
		t.Fatalf("a prompt review: HTTP %d %s", code, out)
	}
	if res := decodeResponse(t, ReviewV1, out); res.Status != metav1.StatusSuccess {
		t.Fatalf("a prompt review failed: %s", res.Message)
	}
	return took
}

// p99 is the 99th percentile of ds.
func p99(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*99/100)]
}

// promptReview is what a prompt client sends: a review of n Websites.
func promptReview(t testing.TB, n int) []byte {
	objs := make([]map[string]any, n)
	for i := range objs {
		objs[i] = website("v1alpha1", fmt.Sprintf("w%d", i), "nginx")
	}
	return review(t, ReviewV1, "prompt", group+"/v1", objs...)
}

// interleaved posts body to quiet and to loaded in turn, n times each (or
// for at most a minute), and returns the latencies of each.
func interleaved(t testing.TB, quiet, loaded *testServer, body []byte, n int) (q, l []time.Duration) {
	for end := time.Now().Add(time.Minute); len(q) < n && time.Now().Before(end); {
		q = append(q, timedReview(t, quiet, body))
		l = append(l, timedReview(t, loaded, body))
	}
	return q, l
}

// slowScenario is a load of slow bodies against one server, beside which a
// prompt client's reviews must keep their latency.
type slowScenario struct {
	name string
	// maxRatio bounds the loaded p99 over the quiet p99.
	maxRatio float64
	limits   serverOption // nil: the defaults
	groups   []slowGroup
	// check, when set, says what the scenario must have done to the slow
	// bodies.
	check func(t testing.TB, answers map[string]int)
}

// slowGroup is conns slow bodies that declare declared bytes and send burst
// bytes at once, then one a second.
type slowGroup struct{ conns, declared, burst int }

func (sc slowScenario) conns() int {
	n := 0
	for _, g := range sc.groups {
		n += g.conns
	}
	return n
}

// smallBudget: requests up to 256 KiB, 512 KiB of bodies in flight.
func smallBudget(s *Server) {
	s.MaxRequestBytes = 256 << 10
	s.MaxInflightBytes = 512 << 10
}

var slowScenarios = []slowScenario{
	// Issue 28's reproduction, with the default limits: each body holds a
	// 4 KiB buffer, 800 KiB in all, well within the budget.
	{name: "200-trickling", maxRatio: 2, groups: []slowGroup{{200, 3_000_000, 1}}},
	// Slow bodies that hold more than the budget together: 200 trickling
	// (800 KiB) and 30 that send 100 KiB at once, then trickle (3.75 MiB),
	// against 512 KiB. They lose their shares to the prompt reviews.
	{name: "over-the-budget", maxRatio: 2, limits: smallBudget, groups: []slowGroup{{200, 256 << 10, 1}, {30, 256 << 10, 100 << 10}},
		check: func(t testing.TB, answers map[string]int) {
			if answers["HTTP/1.1 408 Request Timeout: evicted"] == 0 {
				t.Errorf("no slow body was evicted: %v", answers)
			}
		}},
}

// run starts two servers with the scenario's limits, loads one of them
// with its slow bodies, and returns them with the slow bodies started.
func (sc slowScenario) run(t testing.TB) (quiet, loaded *testServer, slow []*slowBodies) {
	var opts []serverOption
	if sc.limits != nil {
		opts = append(opts, sc.limits)
	}
	quiet, loaded = startServer(t, opts...), startServer(t, opts...)
	for _, g := range sc.groups {
		slow = append(slow, startSlowBodies(t, loaded, g.conns, g.declared, g.burst, time.Second))
	}
	return quiet, loaded, slow
}

func (sc slowScenario) budget() int64 {
	s := &Server{}
	if sc.limits != nil {
		sc.limits(s)
	}
	if s.MaxInflightBytes == 0 {
		return DefaultMaxInflightBytes()
	}
	return s.MaxInflightBytes
}

// Issue 28: 150 connections that each declared 3 MB and sent one byte a
// second held the whole body budget, and every other review waited up to
// 10 s (p99 9.9 s here, 20x the quiet server's). Now, whatever the slow
// bodies do (slowScenarios), a prompt client's reviews (100 objects each,
// 20 under the race detector) keep a p99 within maxRatio times the p99 of the same reviews against a
// server without them, measured interleaved in the same run; and the heap
// of the whole process (clients included) stays under twice the budget
// plus 128 KiB a connection above its baseline.
//
// The machine is shared: a burst of another process's work can land on
// the few slowest of the reviews, which decide a p99. The ratio is the
// median of up to three rounds (two that agree decide).
func TestSlowBodiesDoNotDelayPromptReviews(t *testing.T) {
	for _, sc := range slowScenarios {
		t.Run(sc.name, func(t *testing.T) {
			good := promptReview(t, promptObjects)
			heapBase := heapNow()
			sampler := sampleHeap(10 * time.Millisecond)
			quiet, loaded, slow := sc.run(t)
			for range 20 {
				timedReview(t, quiet, good)
				timedReview(t, loaded, good)
			}
			time.Sleep(2 * time.Second) // every connection has sent a byte since its first
			var ratios []float64
			var over int
			for len(ratios) < 3 && over != 2 && len(ratios)-over != 2 {
				q, l := interleaved(t, quiet, loaded, good, promptRounds)
				ratio := float64(p99(l)) / float64(p99(q))
				ratios = append(ratios, ratio)
				if ratio > sc.maxRatio {
					over++
				}
				t.Logf("round %d: p99 of %d prompt reviews: quiet %v, beside %d slow bodies %v (%.2fx)",
					len(ratios), len(q), p99(q).Round(time.Microsecond), sc.conns(), p99(l).Round(time.Microsecond), ratio)
			}
			peak := sampler.Stop()
			answers := map[string]int{}
			for _, s := range slow {
				s.close()
				t.Log(s.summary())
				for k, v := range s.answers {
					answers[k] += v
				}
			}
			slices.Sort(ratios)
			t.Logf("median ratio %.2fx; heap +%d MiB", ratios[len(ratios)/2], (peak-heapBase)>>20)
			if over >= 2 {
				t.Errorf("prompt reviews beside %d slow bodies: p99 over %.1fx the quiet server's in %d of %d rounds (ratios %.2f)", sc.conns(), sc.maxRatio, over, len(ratios), ratios)
			}
			if bound := uint64(2*sc.budget() + int64(sc.conns())*128<<10); peak > heapBase+bound {
				t.Errorf("heap peaked %d MiB above the baseline, over the bound of %d MiB", (peak-heapBase)>>20, bound>>20)
			}
			if sc.check != nil {
				sc.check(t, answers)
			}
		})
	}
}

// BenchmarkPromptReviewsBesideSlowBodies measures, per slowScenarios case,
// a prompt client's reviews (100 objects each) against a quiet server and
// against one loaded with the scenario's slow bodies, in turn: one op is
// one review to each. It reports both p99s and x-quiet-p99, the loaded
// p99 over the quiet one.
func BenchmarkPromptReviewsBesideSlowBodies(b *testing.B) {
	for _, sc := range slowScenarios {
		b.Run(sc.name, func(b *testing.B) {
			quiet, loaded, _ := sc.run(b)
			good := promptReview(b, 100)
			for range 20 {
				timedReview(b, quiet, good)
				timedReview(b, loaded, good)
			}
			var q, l []time.Duration
			for b.Loop() {
				q = append(q, timedReview(b, quiet, good))
				l = append(l, timedReview(b, loaded, good))
			}
			b.ReportMetric(float64(p99(q))/1e6, "quiet-p99-ms")
			b.ReportMetric(float64(p99(l))/1e6, "slow-p99-ms")
			b.ReportMetric(float64(p99(l))/float64(p99(q)), "x-quiet-p99")
		})
	}
}

// A stalled HTTP/2 stream loses its share to a review that needs it: the
// stream is answered 408, the review succeeds, and the refusal is counted.
// (HTTP/2 bodies are cut through the stream's read deadline, HTTP/1 ones
// through the connection's.)
func TestStalledHTTP2BodyIsEvicted(t *testing.T) {
	ts := startServer(t, func(s *Server) {
		s.MaxRequestBytes = 64 << 10
		s.MaxInflightBytes = 80 << 10
	})
	h2 := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ts.ca.pool()}, ForceAttemptHTTP2: true}}
	pr, pw := io.Pipe()
	defer pw.Close()
	req, err := http.NewRequest(http.MethodPost, ts.convert, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = 60 << 10
	type answer struct {
		proto, body string
		code        int
		err         error
	}
	stalled := make(chan answer, 1)
	go func() {
		resp, err := h2.Do(req)
		if err != nil {
			stalled <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		stalled <- answer{proto: resp.Proto, code: resp.StatusCode, body: string(b), err: err}
	}()
	if _, err := pw.Write([]byte(strings.Repeat(" ", 40<<10))); err != nil {
		t.Fatal(err)
	}
	// The server holds 64 KiB for the 40 KiB it received; then the body
	// pauses.
	time.Sleep(2 * stallPause)
	timedReview(t, ts, promptReview(t, 100)) // 31 KiB: it needs the stalled body's share
	select {
	case a := <-stalled:
		if a.err != nil || a.proto != "HTTP/2.0" || a.code != http.StatusRequestTimeout || !strings.Contains(a.body, "request body evicted after") {
			t.Errorf("the stalled stream: %s %d %s %v; want HTTP/2.0 408 request body evicted", a.proto, a.code, a.body, a.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stalled stream was not answered")
	}
	if v := metric(t, ts.reg, MetricRefused, map[string]string{"reason": RefusedEvicted}).GetCounter().GetValue(); v != 1 {
		t.Errorf("%s{reason=%q} = %v, want 1", MetricRefused, RefusedEvicted, v)
	}
}
