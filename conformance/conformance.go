// Package conformance is the suite that proves a katalog's conversions, and
// this runtime's /convert webhook, correct — offline, and against a real
// kube-apiserver that calls the webhook.
//
//	report := conformance.Run(ctx, plan, conformance.Options{Count: 100, Seed: 1, APIServer: true})
//	report.WriteText(os.Stdout)
//	if report.Failed() { … }
//
// The checks, in four groups:
//
//   - static: the katalog compiles; every ordered pair of served versions has
//     a conversion route; every literal a path writes validates against the
//     target field's schema; the sample objects validate at their version;
//     every conversion output (A→B, over sample and generated objects)
//     validates against B's schema after pruning, as the API server prunes.
//   - roundtrip: A→B→A gives back A for every pair of served versions, over
//     the katalog's sample objects and objects generated from A's schema
//     (objgen, deterministic from a seed); expected conversions
//     (Options.Golden) hold. A failure shows the smallest object found that
//     still fails (objgen.Shrink) and the field that differs.
//   - protocol: through the real /convert handler (webhook.ConvertHandler):
//     ConversionReview v1 and v1beta1, uid echoed, count and order kept,
//     apiVersion set, kind/name/namespace/uid and all metadata but labels and
//     annotations unchanged, the same result as the offline converter, mixed
//     source versions in one review, objects at the desired version returned
//     unchanged, failures reported as Failure with a message and no objects,
//     a converter that touches metadata caught, malformed requests rejected.
//   - apiserver (Options.APIServer): kube-apiserver and etcd (envtest) call
//     the handler over TLS with a CA made for the run; the katalog's CRDs
//     are installed with webhook conversion; then through every served
//     version: create, get, list, watch, update, patch, delete and
//     deletecollection; every object read back at every other version and
//     compared with the offline conversion; labels and annotations written
//     through one version seen through the others; status (and scale)
//     subresources; the storage version changed and a list of objects stored
//     at both versions read at every version — each with
//     conversionReviewVersions ["v1","v1beta1"] and ["v1beta1","v1"],
//     asserting the webhook received reviews of the expected version.
package conformance

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/conversion"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/webhook"
)

// Check groups.
const (
	GroupStatic    = "static"
	GroupRoundTrip = "roundtrip"
	GroupProtocol  = "protocol"
	GroupAPIServer = "apiserver"
)

// Defaults of Options.
const (
	DefaultCount          = 100
	DefaultAPIServerCount = 3
)

// MaxFailures is how many failing cases a check keeps in detail (it counts
// all of them).
const MaxFailures = 3

// Options tune a run. The zero value is usable.
type Options struct {
	// Count is how many objects are generated per served version for the
	// static and round-trip checks (0: DefaultCount; negative: none, only
	// the sample objects).
	Count int
	// Seed selects the generated objects: the same seed gives the same
	// objects, so a failure reproduces.
	Seed int64
	// Samples are objects to check besides the katalog's crFiles (each at
	// its own apiVersion; objects of kinds the katalog does not serve are
	// ignored).
	Samples []*unstructured.Unstructured
	// Golden are expected conversions, checked offline and, with APIServer,
	// through the API server.
	Golden []Golden

	// APIServer runs the apiserver group against kube-apiserver and etcd.
	APIServer bool
	// APIServerCount is how many generated objects per served version are
	// written to the API server, besides the samples (0:
	// DefaultAPIServerCount; negative: none).
	APIServerCount int
	// AssetsDir holds the kube-apiserver and etcd binaries. Empty means
	// $KUBEBUILDER_ASSETS, else the directory hack/envtest-assets.sh prints,
	// the script found in the working directory or the katalog's directory
	// or one of their parents (an Orkestra checkout).
	AssetsDir string
	// Environment is a running API server to use (tests that run several
	// katalogs share one); nil starts one for the run and stops it after.
	Environment *Environment

	// Diagnostics are the katalog's load and compile diagnostics (nil: it
	// compiled cleanly). Errors fail static/compile; a CRD whose conversion
	// did not compile is left out of the other checks, which run on the
	// rest.
	Diagnostics katalog.Diagnostics

	// Conversion configures the converter under test.
	Conversion conversion.Options
	// Progress, when set, is called with every check as it finishes.
	Progress func(Check)

	// webhookConverter replaces the converter behind the served /convert
	// (tests: a broken webhook must be caught).
	webhookConverter webhook.Converter
	// offlineConverter replaces the converter of the offline checks (tests:
	// a converter that ignores edits must be caught).
	offlineConverter webhook.Converter
}

// Golden is an expected conversion: Object read at Version must be Want.
type Golden struct {
	Name string
	// Object is the input, at its apiVersion.
	Object *unstructured.Unstructured
	// Version is the version to read it at (v2, or group/v2).
	Version string
	// Want is the object expected at Version. Its spec and status, when it
	// has them, must equal the converted object's exactly (a field absent
	// from Want must be absent); its labels and annotations must be present
	// with these values (others may exist).
	Want map[string]any
}

// Check is the outcome of one check.
type Check struct {
	Group string
	Name  string
	// Passed is false when any case failed.
	Passed bool
	// Cases is how many cases (objects, reviews, requests) were checked;
	// Failed how many of them failed.
	Cases, Failed int
	// Note says what was covered, for the summary line.
	Note     string
	Duration time.Duration
	// Failures are the first MaxFailures failing cases.
	Failures []Failure
}

// ID is "group/name".
func (c *Check) ID() string { return c.Group + "/" + c.Name }

// Failure is one failing case.
type Failure struct {
	Message string
	// Field is the field path that differs or fails validation, when one
	// does (e.g. spec.name).
	Field string
	// Object is the object that fails — for generated objects the smallest
	// one found that still fails.
	Object map[string]any
	// Explain are the lines of `orkestra explain` about the field: where
	// the path puts it and how it comes back.
	Explain []string
	// acknowledged: the failure is a path's declared mayFail (the
	// object is left out rather than failed).
	acknowledged bool
}

// Report is the outcome of a run.
type Report struct {
	// Katalog is the katalog's main file.
	Katalog  string
	Seed     int64
	Count    int
	Checks   []Check
	Duration time.Duration
}

// Failed reports whether any check failed.
func (r *Report) Failed() bool {
	for i := range r.Checks {
		if !r.Checks[i].Passed {
			return true
		}
	}
	return false
}

// Counts returns how many checks passed and failed.
func (r *Report) Counts() (passed, failed int) {
	for i := range r.Checks {
		if r.Checks[i].Passed {
			passed++
		} else {
			failed++
		}
	}
	return passed, failed
}

// Find returns the checks whose ID (group/name) contains substr.
func (r *Report) Find(substr string) []Check {
	var out []Check
	for _, c := range r.Checks {
		if contains(c.ID(), substr) {
			out = append(out, c)
		}
	}
	return out
}

// Run runs the suite on a compiled plan. It never panics on a bad katalog
// and does not stop at the first failure: every check runs and reports.
// Cancelling ctx stops the apiserver checks (the rest are fast).
func Run(ctx context.Context, plan *engine.Plan, opts Options) *Report {
	start := time.Now()
	if opts.Count == 0 {
		opts.Count = DefaultCount
	}
	if opts.Count < 0 {
		opts.Count = 0
	}
	if opts.APIServerCount == 0 {
		opts.APIServerCount = DefaultAPIServerCount
	}
	if opts.APIServerCount < 0 {
		opts.APIServerCount = 0
	}
	r := &runner{plan: plan, opts: opts, conv: conversion.New(plan, opts.Conversion)}
	r.offline = r.conv
	if opts.offlineConverter != nil {
		r.offline = opts.offlineConverter
	}
	r.report.Katalog = plan.Katalog.File
	r.report.Seed, r.report.Count = opts.Seed, opts.Count

	r.crds = collectCRDs(plan)
	r.compileCheck()
	r.loadSamples()
	for _, ci := range r.crds {
		r.staticChecks(ci)
	}
	for _, ci := range r.crds {
		r.roundTripChecks(ci)
		r.editWinsChecks(ci)
	}
	r.goldenChecks()
	r.protocolChecks()
	if opts.APIServer {
		r.apiServerChecks(ctx)
	}
	r.report.Duration = time.Since(start)
	return &r.report
}

// runner holds one run's state.
type runner struct {
	plan *engine.Plan
	opts Options
	conv *conversion.Converter
	// offline converts for the static and round-trip checks: conv, unless a
	// test replaces it.
	offline webhook.Converter
	crds    []*crdInfo
	report  Report
	// sampleErrs are sample files that could not be read.
	sampleErrs []Failure
}

// add records a finished check.
func (r *runner) add(c Check) {
	c.Passed = c.Failed == 0
	r.report.Checks = append(r.report.Checks, c)
	if r.opts.Progress != nil {
		r.opts.Progress(c)
	}
}

// checker accumulates one check's cases.
type checker struct {
	Check
	start time.Time
}

func (r *runner) begin(group, name string) *checker {
	return &checker{Check: Check{Group: group, Name: name}, start: time.Now()}
}

func (c *checker) pass() { c.Cases++ }

func (c *checker) fail(f Failure) {
	c.Cases++
	c.Failed++
	if len(c.Failures) < MaxFailures {
		c.Failures = append(c.Failures, f)
	}
}

func (c *checker) failf(format string, args ...any) {
	c.fail(Failure{Message: fmt.Sprintf(format, args...)})
}

func (r *runner) end(c *checker) {
	c.Duration = time.Since(c.start)
	r.add(c.Check)
}
