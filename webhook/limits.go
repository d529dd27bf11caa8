package webhook

import (
	"fmt"
	"math"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"

	"k8s.io/apimachinery/pkg/types"
)

// InstallMemoryLimit is the container memory limit of the Deployment
// `orkestra manifests` generates (manifests reads it from here), and
// the memory the /convert budget is sized for when the process runs without
// GOMEMLIMIT (the generated Deployment sets GOMEMLIMIT to its limit).
const InstallMemoryLimit = 512 << 20

// reviewExpansion is how many bytes a review allocates per byte of its body
// while it is decoded, converted and encoded, rounded up: measured on a
// 2 MiB review of Website objects at about 16 for the identity converter, 24
// for CEL and 29 for legacy templates (TestReviewExpansion keeps them under
// it). Allocation over-counts the live heap, which is what the budget bounds.
const reviewExpansion = 32

// DefaultMaxInflightBytes returns the default budget of request body bytes
// held at once by all /convert requests together: half the memory limit
// divided by reviewExpansion, so that the reviews in flight stay under half
// the limit: 8 MiB of bodies under the 512 MiB install limit, two 3 MiB
// reviews at once or thousands of ordinary ones. The limit is GOMEMLIMIT
// when set, InstallMemoryLimit otherwise.
func DefaultMaxInflightBytes() int64 {
	limit := debug.SetMemoryLimit(-1)
	if limit <= 0 || limit == math.MaxInt64 {
		limit = InstallMemoryLimit
	}
	return limit / 2 / reviewExpansion
}

// Defaults of the other /convert bounds.
const (
	// DefaultBodyTimeout bounds the time from a request's headers to the
	// last byte of its body: the API server sends a review at once, so only
	// a slow or stalled client takes longer, and it holds its bytes of the
	// budget no longer than this.
	DefaultBodyTimeout = 10 * time.Second
	// maxConcurrentStreams limits the requests in flight on one HTTP/2
	// connection (Go's default is 250); the API server opens more
	// connections when it needs them.
	maxConcurrentStreams = 16
	// http2ConnWindow and http2StreamWindow bound the bytes an HTTP/2 client
	// may send ahead of the handler reading them (Go's defaults: 1 MiB
	// each); they sit in server buffers outside the budget.
	http2ConnWindow   = 128 << 10
	http2StreamWindow = 64 << 10
)

// http2Config limits the webhook server's HTTP/2 connections.
func http2Config() *http.HTTP2Config {
	return &http.HTTP2Config{
		MaxConcurrentStreams:          maxConcurrentStreams,
		MaxReceiveBufferPerConnection: http2ConnWindow,
		MaxReceiveBufferPerStream:     http2StreamWindow,
	}
}

// Failure logging: one line per failed review would let a client write
// megabytes of log per request, so messages are cut to maxLoggedMessage
// bytes and lines limited to failureLogRate per second (bursts of
// failureLogBurst); the next line logged says how many were left out.
const (
	maxLoggedMessage = 1024
	failureLogRate   = 10
	failureLogBurst  = 20
)

type failureLog struct {
	log     logr.Logger
	limiter *rate.Limiter
	dropped atomic.Int64
}

func newFailureLog(log logr.Logger) *failureLog {
	return &failureLog{log: log, limiter: rate.NewLimiter(failureLogRate, failureLogBurst)}
}

func (f *failureLog) failed(uid types.UID, desired, message string) {
	if !f.limiter.Allow() {
		f.dropped.Add(1)
		return
	}
	kv := []any{"uid", uid, "desiredAPIVersion", truncate(desired, 256), "message", truncate(message, maxLoggedMessage)}
	if n := f.dropped.Swap(0); n > 0 {
		kv = append(kv, "notLogged", n)
	}
	f.log.Info("conversion failed", kv...)
}

// truncate cuts s to at most n bytes on a rune boundary, saying how much was cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:cut], len(s)-cut)
}
