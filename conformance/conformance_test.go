package conformance

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	celgo "github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/conversion"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/webhook"
)

const (
	websiteKatalog = "../examples/website/katalog.yaml"
	legacyKatalog  = "../examples/legacy-website/katalog.yaml"
	hostPortKatlog = "testdata/hostport/katalog.yaml"
	lossyKatalog   = "testdata/lossy/katalog.yaml"

	looseHostPortKatalog = "testdata/loosehostport/katalog.yaml"
	retentionKatalog     = "testdata/retention/katalog.yaml"
	newestKatalog        = "testdata/newest/katalog.yaml"
)

// The API server is started once and shared by the tests, one after the
// other (their katalogs' CRDs are installed and removed by each run).
var (
	envOnce   sync.Once
	sharedEnv *Environment
	envErr    error
)

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	code := m.Run()
	if sharedEnv != nil {
		_ = sharedEnv.Stop()
	}
	os.Exit(code)
}

// apiEnv returns the shared API server. The apiserver checks are part of
// this package's tests: without the binaries the test fails, it does not
// skip.
func apiEnv(t *testing.T) *Environment {
	t.Helper()
	envOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
		defer cancel()
		sharedEnv, envErr = StartEnvironment(ctx, "")
	})
	if envErr != nil {
		t.Fatalf("the apiserver checks need kube-apiserver and etcd: %v", envErr)
	}
	return sharedEnv
}

// compile loads and compiles a katalog the way the CLI does.
func compile(t *testing.T, file string) *engine.Plan {
	t.Helper()
	k, diags := katalog.Load(file)
	if diags.HasErrors() {
		t.Fatalf("loading %s:\n%v", file, diags)
	}
	cel, err := celengine.New(celengine.Options{Libraries: []celgo.EnvOption{gotmpl.CELLibrary()}})
	if err != nil {
		t.Fatal(err)
	}
	plan, cdiags := engine.Compile(k, engine.Backends{CEL: cel, Legacy: gotmpl.New(cel)}, engine.CompileOptions{})
	if cdiags.HasErrors() {
		t.Fatalf("compiling %s:\n%v", file, cdiags)
	}
	return plan
}

func readSamples(t *testing.T, pattern string) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no files match %s", pattern)
	}
	var out []*unstructured.Unstructured
	for _, f := range files {
		objs, err := readObjectsFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			out = append(out, &unstructured.Unstructured{Object: o})
		}
	}
	return out
}

func run(t *testing.T, plan *engine.Plan, opts Options) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := Run(ctx, plan, opts)
	var b bytes.Buffer
	_ = r.WriteText(&b)
	t.Logf("report:\n%s", b.String())
	return r
}

// mustHave asserts that the report has passing checks whose ID contains
// each substring.
func mustHave(t *testing.T, r *Report, substrs ...string) {
	t.Helper()
	for _, s := range substrs {
		cs := r.Find(s)
		if len(cs) == 0 {
			t.Errorf("no check %q in the report", s)
		}
		for _, c := range cs {
			if !c.Passed {
				t.Errorf("check %s failed", c.ID())
			}
			if c.Cases == 0 && !strings.Contains(c.ID(), "literals") {
				t.Errorf("check %s checked nothing", c.ID())
			}
		}
	}
}

func mustPass(t *testing.T, r *Report) {
	t.Helper()
	if r.Failed() {
		for _, c := range r.Checks {
			if !c.Passed {
				t.Errorf("%s", FormatCheck(c))
			}
		}
	}
}

func TestWebsite(t *testing.T) {
	plan := compile(t, websiteKatalog)
	r := run(t, plan, Options{
		Count: 60, Seed: 1, APIServer: true, Environment: apiEnv(t),
		Samples: readSamples(t, "../examples/website/website-*.yaml"),
	})
	mustPass(t, r)
	mustHave(t, r,
		"static/compile", "static/reachable websites", "static/literals websites", "static/samples websites",
		"static/outputs websites.demo.orkestra.io v1alpha1→v1", "static/outputs websites.demo.orkestra.io v1→v1alpha1",
		"roundtrip/websites.demo.orkestra.io v1alpha1→v1→v1alpha1", "roundtrip/websites.demo.orkestra.io v1→v1alpha1→v1",
		"protocol/websites.demo.orkestra.io review v1", "protocol/websites.demo.orkestra.io review v1beta1",
		"protocol/websites.demo.orkestra.io failure v1", "protocol/websites.demo.orkestra.io failure v1beta1",
		"protocol/metadata guard", "protocol/malformed requests",
		"apiserver/install websites",
		"write via v1alpha1 [v1,v1beta1]", "write via v1 [v1beta1,v1]",
		"read v1alpha1→v1 [v1,v1beta1]", "read v1→v1alpha1 [v1beta1,v1]",
		"labels/annotations via v1alpha1", "status via v1alpha1 [v1,v1beta1]", "status via v1 [v1beta1,v1]",
		"storage v1→v1alpha1, mixed list [v1,v1beta1]", "storage v1→v1alpha1, mixed list [v1beta1,v1]",
		"webhook reviews [v1,v1beta1]", "webhook reviews [v1beta1,v1]",
	)
	// The webhook really received reviews of both versions.
	for _, id := range []string{"webhook reviews [v1,v1beta1]", "webhook reviews [v1beta1,v1]"} {
		for _, c := range r.Find(id) {
			if strings.HasPrefix(c.Note, "0 ") {
				t.Errorf("%s: %s", id, c.Note)
			}
		}
	}
}

// The legacy example serves one version: nothing converts, the conversion
// checks pass trivially, the static and apiserver checks still run.
func TestLegacyWebsite(t *testing.T) {
	plan := compile(t, legacyKatalog)
	r := run(t, plan, Options{
		Count: 30, Seed: 1, APIServer: true, Environment: apiEnv(t),
		Samples: readSamples(t, "../examples/legacy-website/webapp.yaml"),
	})
	mustPass(t, r)
	mustHave(t, r, "static/compile", "static/reachable webapps", "static/samples webapps",
		"protocol/webapps.demo.orkestra.io review v1", "protocol/webapps.demo.orkestra.io failure v1beta1",
		"apiserver/install webapps", "write via v1alpha1 [v1,v1beta1]", "write via v1alpha1 [v1beta1,v1]",
		"status via v1alpha1", "webhook reviews [v1,v1beta1]")
	if cs := r.Find("reachable webapps"); len(cs) != 1 || !strings.Contains(cs[0].Note, "nothing to convert") {
		t.Errorf("reachable: %+v", cs)
	}
	if len(r.Find("roundtrip/")) != 0 || len(r.Find("outputs")) != 0 {
		t.Errorf("round trips for a single-version CRD: %v", r.Find("roundtrip/"))
	}
}

// A katalog in upstream's newest layout (v0.7.18), its conversion paths
// under admission.conversion, converts and passes every group, the API
// server's included.
func TestNewestLayout(t *testing.T) {
	plan := compile(t, newestKatalog)
	if c := plan.Entries[0].Source.Conversion; c == nil || c.Path != "admission.conversion" {
		t.Fatalf("the fixture's conversion is not read from admission.conversion: %+v", c)
	}
	r := run(t, plan, Options{Count: 30, Seed: 1, APIServer: true, Environment: apiEnv(t)})
	mustPass(t, r)
	mustHave(t, r, "static/compile", "static/samples buckets",
		"roundtrip/buckets.layout.orkestra.io v1alpha1→v1→v1alpha1", "roundtrip/buckets.layout.orkestra.io v1→v1alpha1→v1",
		"apiserver/install buckets", "read v1alpha1→v1 [v1,v1beta1]", "read v1→v1alpha1 [v1beta1,v1]",
		"storage v1→v1alpha1, mixed list [v1,v1beta1]", "webhook reviews [v1,v1beta1]", "webhook reviews [v1beta1,v1]")
}

func hostPortGolden() []Golden {
	v1 := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "conformance.orkestra.io/v1", "kind": "HostPort",
		"metadata": map[string]any{"name": "e2e-v1", "namespace": "default"},
		"spec":     map[string]any{"hostPort": "localhost:8080"},
	}}
	v2 := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "conformance.orkestra.io/v2", "kind": "HostPort",
		"metadata": map[string]any{"name": "e2e-v2", "namespace": "default"},
		"spec":     map[string]any{"host": "example.com", "port": "443"},
	}}
	return []Golden{
		{Name: "hostPort split", Object: v1, Version: "v2",
			Want: map[string]any{"spec": map[string]any{"host": "localhost", "port": "8080"}}},
		{Name: "host and port joined", Object: v2, Version: "v1",
			Want: map[string]any{"spec": map[string]any{"hostPort": "example.com:443"}}},
	}
}

// The classic case of the Kubernetes e2e suite: hostPort "localhost:8080"
// at v1 reads as host "localhost", port "8080" and no hostPort at v2 —
// offline and through the API server.
func TestHostPort(t *testing.T) {
	plan := compile(t, hostPortKatlog)
	r := run(t, plan, Options{Count: 60, Seed: 1, APIServer: true, Environment: apiEnv(t), Golden: hostPortGolden()})
	mustPass(t, r)
	mustHave(t, r, "static/samples hostports",
		"roundtrip/hostports.conformance.orkestra.io v1→v2→v1", "roundtrip/hostports.conformance.orkestra.io v2→v1→v2",
		"roundtrip/golden hostPort split", "roundtrip/golden host and port joined",
		"apiserver/golden hostPort split [v1,v1beta1]", "apiserver/golden hostPort split [v1beta1,v1]",
		"apiserver/golden host and port joined [v1,v1beta1]",
		"read v1→v2 [v1,v1beta1]", "read v2→v1 [v1beta1,v1]",
		"storage v1→v2, mixed list [v1,v1beta1]", "storage v1→v2, mixed list [v1beta1,v1]",
		"webhook reviews [v1,v1beta1]", "webhook reviews [v1beta1,v1]")
}

// A wrong expectation is reported, naming the field.
func TestGoldenMismatch(t *testing.T) {
	plan := compile(t, hostPortKatlog)
	g := hostPortGolden()[:1]
	g[0].Want = map[string]any{"spec": map[string]any{"host": "localhost", "port": "8080", "hostPort": "localhost:8080"}}
	r := run(t, plan, Options{Count: 5, Seed: 1, Golden: g})
	cs := r.Find("roundtrip/golden hostPort split")
	if len(cs) != 1 || cs[0].Passed {
		t.Fatalf("golden check: %+v", cs)
	}
	if f := cs[0].Failures[0]; f.Field != "spec.hostPort" || !strings.Contains(f.Message, "missing") {
		t.Errorf("failure: %+v", f)
	}
}

// A lossy computation — v1 → v2 lower-cases spec.name — round-trips
// exactly through the stash, offline and through the API server, and an
// edit at either version wins over what the stash holds.
func TestLossyComputationRoundTripsExactly(t *testing.T) {
	plan := compile(t, lossyKatalog)
	r := run(t, plan, Options{Count: 60, Seed: 1, APIServer: true, APIServerCount: 1, Environment: apiEnv(t)})
	mustPass(t, r)
	mustHave(t, r, "roundtrip/greetings.conformance.orkestra.io v1→v2→v1", "roundtrip/greetings.conformance.orkestra.io v2→v1→v2",
		"roundtrip/greetings.conformance.orkestra.io edit at v2 wins over v1", "roundtrip/greetings.conformance.orkestra.io edit at v1 wins over v2",
		"apiserver/greetings.conformance.orkestra.io write via v2")
	for _, c := range r.Find("edit at") {
		if c.Cases < 20 {
			t.Errorf("%s tried %d edits, want at least 20", c.ID(), c.Cases)
		}
	}
}

// Three versions whose paths default what older versions leave out
// (orValue(30), orValue(false)): an object written at any version reads
// back at that version exactly as written, through the API server too.
func TestDefaultsRoundTripExactly(t *testing.T) {
	plan := compile(t, retentionKatalog)
	r := run(t, plan, Options{Count: 60, Seed: 1, APIServer: true, APIServerCount: 2, Environment: apiEnv(t)})
	mustPass(t, r)
	mustHave(t, r, "roundtrip/backups.conformance.orkestra.io v1alpha1→v1→v1alpha1",
		"roundtrip/backups.conformance.orkestra.io v1alpha1→v1beta1→v1alpha1",
		"roundtrip/backups.conformance.orkestra.io edit at v1 wins over v1alpha1",
		"apiserver/backups.conformance.orkestra.io write via v1alpha1", "read v1→v1alpha1")
}

// The engine and the suite agree on what the stash means: an object that
// already carries one (a sample converted from v1alpha1, with the retention
// the way back would not reproduce) round-trips from v1 and v1beta1, and its
// entries come back at v1alpha1.
func TestSuiteAndEngineAgreeOnTheStash(t *testing.T) {
	plan := compile(t, retentionKatalog)
	conv := conversion.New(plan, conversion.Options{})
	var samples []*unstructured.Unstructured
	for _, v := range []string{"v1", "v1beta1"} {
		in := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "conformance.orkestra.io/v1alpha1", "kind": "Backup",
			"metadata": map[string]any{"name": "stashed-" + v, "namespace": "default"},
			"spec":     map[string]any{"schedule": "@daily"},
		}}
		out, err := conv.Convert(in, "conformance.orkestra.io/"+v)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := out.GetAnnotations()[conversion.StashAnnotation]; !ok {
			t.Fatalf("%s: the sample must carry a stash: %v", v, out.Object)
		}
		samples = append(samples, out)
	}
	r := run(t, plan, Options{Count: 10, Seed: 1, Samples: samples})
	mustPass(t, r)
	for _, c := range r.Find("roundtrip/backups.conformance.orkestra.io v1") {
		if c.Cases < 10+len(samples) {
			t.Errorf("%s checked %d objects", c.ID(), c.Cases)
		}
	}
}

// A conversion that fails on objects its source schema accepts is shown
// with the smallest such object and the field.
func TestPartialConversionFails(t *testing.T) {
	plan := compile(t, looseHostPortKatalog)
	r := run(t, plan, Options{Count: 40, Seed: 1})
	cs := r.Find("static/outputs hostports.conformance.orkestra.io v1→v2")
	if len(cs) != 1 || cs[0].Passed || len(cs[0].Failures) == 0 {
		t.Fatalf("outputs check: %+v", cs)
	}
	f := cs[0].Failures[0]
	if f.Field != "spec.host" || !strings.Contains(f.Message, "no such key: hostPort") {
		t.Errorf("failure: field %q, %s", f.Field, f.Message)
	}
	// The smallest failing object has no spec at all.
	if _, ok := f.Object["spec"]; ok {
		t.Errorf("not shrunk: %v", f.Object)
	}
	if text := FormatCheck(cs[0]); !strings.Contains(text, "field: spec.host") || !strings.Contains(text, "smallest failing object:") {
		t.Errorf("summary:\n%s", text)
	}
	// What explain says of the field: where the path puts it, how it comes back.
	want := "  spec.hostPort  → spec.host ${self.spec.hostPort.split(':')[0]}; spec.port ${self.spec.hostPort.split(':')[1]}; exact through the stash; lossy after an edit (back: ${self.spec.?host.orValue('') + ':' + self.spec.?port.orValue('')})"
	if len(f.Explain) != 1 || f.Explain[0] != want || !strings.Contains(FormatCheck(cs[0]), "explain:\n        "+want) {
		t.Errorf("explain lines %q\nwant %q", f.Explain, want)
	}
}

// ignoresEdits converts like the katalog, except that an object read back
// at a version it was converted from comes back as it was then, whatever
// was edited since: the edit checks must catch it.
type ignoresEdits struct {
	webhook.Converter
	first map[string]*unstructured.Unstructured
}

func (c *ignoresEdits) Convert(obj *unstructured.Unstructured, desired string) (*unstructured.Unstructured, error) {
	key := obj.GetName() + " " + desired
	if seen, ok := c.first[key]; ok {
		return seen.DeepCopy(), nil
	}
	out, err := c.Converter.Convert(obj, desired)
	if err == nil {
		c.first[obj.GetName()+" "+obj.GetAPIVersion()] = obj.DeepCopy()
	}
	return out, err
}

func TestIgnoredEditIsCaught(t *testing.T) {
	plan := compile(t, lossyKatalog)
	opts := Options{Count: 20, Seed: 1}
	opts.offlineConverter = &ignoresEdits{Converter: conversion.New(plan, conversion.Options{}), first: map[string]*unstructured.Unstructured{}}
	r := run(t, plan, opts)
	cs := r.Find("roundtrip/greetings.conformance.orkestra.io edit at v2 wins over v1")
	if len(cs) != 1 || cs[0].Passed {
		t.Fatalf("edit check: %+v", cs)
	}
	if f := cs[0].Failures[0]; !strings.HasPrefix(f.Field, "spec.") || !strings.Contains(f.Message, "edited at v2") {
		t.Errorf("failure: %+v", f)
	}
}

// brokenWebhook converts like the katalog, except that objects read at
// v1alpha1 get one replica more: the apiserver checks must catch it.
type brokenWebhook struct{ webhook.Converter }

func (b brokenWebhook) Convert(obj *unstructured.Unstructured, desired string) (*unstructured.Unstructured, error) {
	out, err := b.Converter.Convert(obj, desired)
	if err != nil || !strings.HasSuffix(desired, "/v1alpha1") {
		return out, err
	}
	out = out.DeepCopy()
	n, _, _ := unstructured.NestedInt64(out.Object, "spec", "replicas")
	_ = unstructured.SetNestedField(out.Object, n+1, "spec", "replicas")
	return out, nil
}

func TestBrokenWebhookIsCaught(t *testing.T) {
	plan := compile(t, websiteKatalog)
	opts := Options{Count: 10, Seed: 1, APIServer: true, APIServerCount: 1, Environment: apiEnv(t)}
	opts.webhookConverter = brokenWebhook{conversion.New(plan, conversion.Options{})}
	r := run(t, plan, opts)
	for _, c := range r.Checks {
		if c.Group != GroupAPIServer && !c.Passed {
			t.Errorf("offline check %s failed", c.ID())
		}
	}
	found := false
	for _, c := range r.Find("apiserver/websites.demo.orkestra.io") {
		for _, f := range c.Failures {
			found = found || f.Field == "spec.replicas"
		}
	}
	if !found {
		t.Error("no apiserver check reported spec.replicas")
	}
}

// Without the binaries the apiserver checks fail and say how to get them.
func TestMissingAssets(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir())
	plan := compile(t, lossyKatalog)
	r := run(t, plan, Options{Count: -1, APIServer: true})
	cs := r.Find("apiserver/start")
	if len(cs) != 1 || cs[0].Passed || !strings.Contains(cs[0].Failures[0].Message, "KUBEBUILDER_ASSETS") {
		t.Fatalf("start check: %+v", cs)
	}
}

func TestReportFormats(t *testing.T) {
	plan := compile(t, looseHostPortKatalog)
	r := run(t, plan, Options{Count: 40, Seed: 1})
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "FAIL: ") || !strings.Contains(last, "failed") {
		t.Errorf("summary line: %q", last)
	}
	for _, c := range r.Checks {
		if !strings.Contains(text.String(), c.ID()) {
			t.Errorf("no line for %s", c.ID())
		}
	}
	var x bytes.Buffer
	if err := r.WriteJUnit(&x); err != nil {
		t.Fatal(err)
	}
	var parsed junitSuites
	if err := xml.Unmarshal(x.Bytes(), &parsed); err != nil {
		t.Fatalf("JUnit XML does not parse: %v\n%s", err, x.String())
	}
	passed, failed := r.Counts()
	if parsed.Tests != passed+failed || parsed.Failures != failed || failed == 0 {
		t.Errorf("JUnit counts %d/%d, report %d/%d", parsed.Tests, parsed.Failures, passed+failed, failed)
	}
	if !strings.Contains(x.String(), "spec.host") {
		t.Error("the JUnit failure does not name spec.host")
	}
	cr := CompileFailure("k.yaml", katalog.Diagnostics{
		{Pos: katalog.Pos{File: "k.yaml", Line: 3, Col: 4}, Severity: katalog.Warning, Message: "w"},
		{Pos: katalog.Pos{File: "k.yaml", Line: 5, Col: 6}, Entry: "e", Field: "spec.x", Message: "bad"},
	}, time.Millisecond)
	if !cr.Failed() || cr.Checks[0].Failed != 1 || cr.Checks[0].Failures[0].Message != "k.yaml:5:6: [e] spec.x: bad" {
		t.Errorf("CompileFailure: %+v", cr.Checks)
	}
}

// Deprecated versions: the API server's Warning header is the katalog's
// deprecationWarning, or its default text when the katalog gives none.
func TestDeprecationWarnings(t *testing.T) {
	plan := compile(t, "testdata/deprecated/katalog.yaml")
	r := run(t, plan, Options{Count: 5, Seed: 1, APIServer: true, Environment: apiEnv(t)})
	mustPass(t, r)
	want := map[string]string{
		"apiserver/deprecation warning gauges v1alpha1": `Warning: "conformance.orkestra.io/v1alpha1 Gauge is going away in the next release; use v1"`,
		"apiserver/deprecation warning gauges v1beta1":  `Warning: "conformance.orkestra.io/v1beta1 Gauge is deprecated; use conformance.orkestra.io/v1 Gauge"`,
	}
	for id, note := range want {
		cs := r.Find(id)
		if len(cs) != 1 || cs[0].Note != note {
			t.Errorf("%s: %+v, want one check noting %s", id, cs, note)
		}
	}
	if cs := r.Find("deprecation warning gauges v1 "); len(cs) != 0 {
		t.Errorf("a deprecation check for the storage version v1: %+v", cs)
	}
}

// A katalog deprecated as a whole (top-level lifecycle.deprecation) that a
// Komposer accepts runs with every version of its CRD deprecated: the API
// server's Warning is the deprecation message, the storage version's too.
func TestPatternDeprecationWarnings(t *testing.T) {
	plan := compile(t, "testdata/deprecated-pattern/komposer.yaml")
	if err := plan.Katalog.StartGate(time.Now()); err != nil {
		t.Fatalf("the Komposer accepts the katalog: %v", err)
	}
	r := run(t, plan, Options{Count: 5, Seed: 1, APIServer: true, Environment: apiEnv(t)})
	mustPass(t, r)
	for _, v := range []string{"v1alpha1", "v1beta1", "v1"} {
		name := "deprecation warning gauges " + v
		found := false
		for _, c := range r.Find("apiserver/" + name) {
			if c.Name == name {
				found = c.Note == `Warning: "the gauges katalog is retired; install meters instead"`
			}
		}
		if !found {
			t.Errorf("%s: no check noting the katalog's message: %+v", name, r.Find("apiserver/"+name))
		}
	}
}
