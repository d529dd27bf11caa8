package simulate

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func TestSpecsPass(t *testing.T) {
	for _, f := range []string{
		"testdata/shop/simulate-free.yaml",
		"testdata/shop/simulate-premium.yaml",
		"testdata/pipeline/simulate.yaml",
		"testdata/simulate-platform.yaml",
		"testdata/copy/simulate-with-source.yaml",
		"testdata/copy/simulate-without-source.yaml",
	} {
		t.Run(f, func(t *testing.T) {
			if outcome, out := runFile(t, f, Options{}); outcome != Passed {
				t.Errorf("outcome %s, want passed:\n%s", outcome, out)
			}
		})
	}
}

// The real reconciler ran: the cluster holds what it wrote, and the
// simulated Deployment's status reached the status fields reading it.
func TestShopClusterAfterTheRun(t *testing.T) {
	c, res := simulated(t, "testdata/shop/simulate-free.yaml")
	ctx := context.Background()
	shop := &unstructured.Unstructured{}
	shop.SetAPIVersion("sim.example.io/v1")
	shop.SetKind("Shop")
	if err := c.client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "corner"}, shop); err != nil {
		t.Fatal(err)
	}
	phase, _, _ := unstructured.NestedString(shop.Object, "status", "phase")
	ready, _, _ := unstructured.NestedInt64(shop.Object, "status", "readyReplicas")
	if phase != "Serving" || ready != 2 {
		t.Errorf("status phase %q readyReplicas %d, want Serving and 2 (read back from the simulated Deployment)", phase, ready)
	}
	var svc corev1.Service
	if err := c.client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "corner-svc"}, &svc); err != nil {
		t.Errorf("the Service was not created: %v", err)
	}
	er := res.Entry("shop")
	if er == nil || er.SteadyAt != 3 || len(er.Cycles) != 5 {
		t.Fatalf("result = %+v, want steady at 3 of 5 cycles", er)
	}
	// Cycle 3 only reads: it is the first cycle without a write.
	for _, op := range er.Cycles[2].Ops {
		if op.write() {
			t.Errorf("cycle 3 wrote %+v", op)
		}
	}
}

func TestPipelineJobsRunAndFail(t *testing.T) {
	c, _ := simulated(t, "testdata/pipeline/simulate.yaml")
	ctx := context.Background()
	phase := func(name string) string {
		p := &unstructured.Unstructured{}
		p.SetAPIVersion("sim.example.io/v1")
		p.SetKind("Pipeline")
		if err := c.client.Get(ctx, types.NamespacedName{Namespace: "default", Name: name}, p); err != nil {
			t.Fatal(err)
		}
		s, _, _ := unstructured.NestedString(p.Object, "status", "phase")
		return s
	}
	if got := phase("release"); got != "Succeeded" {
		t.Errorf("release phase %q, want Succeeded (both Jobs completed)", got)
	}
	if got := phase("broken"); got != "Failed" {
		t.Errorf("broken phase %q, want Failed (its build Job is marked to fail)", got)
	}
	var build batchv1.Job
	if err := c.client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "broken-build"}, &build); err != nil {
		t.Fatal(err)
	}
	if build.Status.Failed == 0 || build.Status.Succeeded != 0 {
		t.Errorf("broken-build status %+v, want failed", build.Status)
	}
}

func TestSpecsFail(t *testing.T) {
	cases := []struct {
		name string
		spec string
		says []string
	}{
		{"update where the operator applied", `spec:
  katalog: %[1]s/shop/katalog.yaml
  cr: %[1]s/shop/cr-free.yaml
  cycles: 2
  expect:
    ops:
      - {cycle: 1, verb: update, resource: deployments, name: corner}
`, []string{"✗ cycle 1: update deployments/corner", "no op matches", "cycle 1: apply deployments/corner in default (created)", "cycle 1: get deployments/corner in default (failed)", "FAIL"}},
		{"absent object created", `spec:
  katalog: %[1]s/shop/katalog.yaml
  cr: %[1]s/shop/cr-premium.yaml
  cycles: 2
  expect:
    absent:
      - {resource: configmaps, name: mall-premium}
`, []string{"✗ absent: any cycle: any write: configmaps/mall-premium", "found 1", "cycle 1: apply configmaps/mall-premium in retail (created)"}},
		{"not steady in too few cycles", `spec:
  katalog: %[1]s/pipeline/katalog.yaml
  cr: %[1]s/pipeline/crs.yaml
  cycles: 3
  expect:
    steady: true
`, []string{"✗ steady", "no steady state in 3 cycles"}},
		{"steady too late", `spec:
  katalog: %[1]s/shop/katalog.yaml
  cr: %[1]s/shop/cr-free.yaml
  cycles: 5
  expect:
    steadyAt: 2
`, []string{"✗ steady by cycle 2", "steady state at cycle 3, expected by cycle 2"}},
		{"reconcile errors", `spec:
  katalog: %[1]s/copy/katalog-same-namespace.yaml
  cr: %[1]s/copy/cr.yaml
  cycles: 2
  expect:
    noErrors: true
`, []string{"✗ noErrors", `reading the Secret to copy, default/db-credentials: secrets "db-credentials" not found`, "✗ default/app: rendering App default/app"}},
		{"count", `spec:
  katalog: %[1]s/pipeline/katalog.yaml
  cr: %[1]s/pipeline/crs.yaml
  cycles: 2
  expect:
    ops:
      - {cycle: 1, verb: create, resource: jobs, count: 3}
`, []string{"2 op(s) match cycle 1: create jobs (at least 3), want at least 3"}},
		{"per-CRD block", `spec:
  katalog: %[1]s/komposer.yaml
  crFiles: [%[1]s/shop/cr-free.yaml, %[1]s/pipeline/crs.yaml]
  cycles: 2
  expect:
    crds:
      pipeline:
        ops:
          - {cycle: 1, verb: create, resource: deployments}
`, []string{"Simulating pipeline", "✗ cycle 1: create deployments", "Simulating shop"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			outcome, out := runFile(t, writeSpec(t, tc.spec), Options{})
			if outcome != Failed {
				t.Fatalf("outcome %s, want failed:\n%s", outcome, out)
			}
			for _, s := range tc.says {
				if !strings.Contains(out, s) {
					t.Errorf("the report does not say %q:\n%s", s, out)
				}
			}
		})
	}
}

// A spec whose problems show only once its katalog is compiled.
func TestSpecsInvalidAgainstTheKatalog(t *testing.T) {
	cases := []struct {
		name string
		spec string
		says []string
	}{
		{"unknown entry in crds", `spec:
  katalog: %[1]s/shop/katalog.yaml
  cr: %[1]s/shop/cr-free.yaml
  expect:
    crds:
      shops: {steady: true}
`, []string{"simulate.yaml:10:7: spec.expect.crds.shops", `the katalog has no entry "shops"; did you mean "shop"?`}},
		{"resource nobody serves", `spec:
  katalog: %[1]s/shop/katalog.yaml
  cr: %[1]s/shop/cr-free.yaml
  expect:
    ops:
      - {verb: create, resource: deployment}
`, []string{"simulate.yaml:10:9: spec.expect.ops[0].resource", `"deployment"; did you mean "deployments"?`}},
		{"object of a kind nobody serves", `spec:
  katalog: %[1]s/shop/katalog.yaml
  crFiles: [%[1]s/shop/cr-free.yaml, %[1]s/pipeline/crs.yaml]
`, []string{"pipeline/crs.yaml", "does not serve sim.example.io/v1, Kind=Pipeline", "add its CRD to spec.crdFiles"}},
		{"katalog that does not load", `spec:
  katalog: %[1]s/broken/katalog.yaml
  cr: %[1]s/shop/cr-free.yaml
`, []string{"broken/katalog.yaml:12:9: [shop] operatorBox.onReconcle", `did you mean "onReconcile"?`, "does not load"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			outcome, out := runFile(t, writeSpec(t, tc.spec), Options{})
			if outcome != Invalid {
				t.Fatalf("outcome %s, want invalid:\n%s", outcome, out)
			}
			for _, s := range tc.says {
				if !strings.Contains(out, s) {
					t.Errorf("the report does not say %q:\n%s", s, out)
				}
			}
		})
	}
}

func TestCyclesOverride(t *testing.T) {
	_, out := runFile(t, "testdata/shop/simulate-premium.yaml", Options{Cycles: 2})
	if !strings.Contains(out, "Max cycles reached (2)") {
		t.Errorf("with --cycles 2 the premium shop runs 2 cycles, before its steady state at cycle 3:\n%s", out)
	}
}

func TestOutputCollapsesIdenticalCycles(t *testing.T) {
	cycle := func(n int) Cycle {
		return Cycle{N: n, Ops: []Op{{Cycle: n, Verb: "update", Resource: "deployments", Name: "web"}, {Cycle: n, Verb: "get", Resource: "deployments", Name: "web"}}}
	}
	er := &EntryResult{Entry: "web", Objects: []string{"default/web"}, Cycles: []Cycle{
		{N: 1, Ops: []Op{{Cycle: 1, Verb: "create", Resource: "deployments", Name: "web", Created: true}, {Cycle: 1, Verb: "update", Resource: "deployments", Name: "web"}}},
		cycle(2), cycle(3), cycle(4),
		{N: 5},
	}}
	var b strings.Builder
	printEntry(&b, er, 5, 0)
	want := `Simulating web: default/web

  Cycle 1:
    + deployments/web
  Cycle 2:
    ~ deployments/web
  (cycles 3–4: identical)

  ~ Max cycles reached (5) in 0s

`
	if b.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestOutputCollapsesOneIdenticalCycle(t *testing.T) {
	write := func(n int) Cycle {
		return Cycle{N: n, Ops: []Op{{Cycle: n, Verb: "patch", Resource: "shops", Subresource: "status", Name: "a"}}}
	}
	er := &EntryResult{Entry: "shop", Objects: []string{"default/a"}, Cycles: []Cycle{write(1), write(2)}, SteadyAt: 2}
	var b strings.Builder
	printEntry(&b, er, 2, 0)
	if !strings.Contains(b.String(), "  Cycle 1:\n    ~ shops/a/status\n  (cycle 2: identical)\n") || !strings.Contains(b.String(), "Steady state at cycle 2") {
		t.Errorf("output:\n%s", b.String())
	}
}

// A copy from another namespace whose source is not in the cluster is
// skipped with a note naming it, as upstream's simulate skips such copies;
// the reconcile does not fail.
func TestCopyWithoutItsSourceIsSkipped(t *testing.T) {
	outcome, out := runFile(t, "testdata/copy/simulate-without-source.yaml", Options{})
	for _, s := range []string{
		"Simulating app: default/app\n  note: Secret default/app-db: a copy of platform/db-credentials, which does not exist — skipped, as upstream's simulate skips copies from other namespaces (put the source in spec.crFiles to run the copy)\n",
		"✓ noErrors",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("the report does not say %q:\n%s", s, out)
		}
	}
	if outcome != Passed {
		t.Errorf("outcome %s, want passed", outcome)
	}
	_, res := simulated(t, "testdata/copy/simulate-without-source.yaml")
	if er := res.Entry("app"); er == nil || len(er.Notes) != 1 {
		t.Errorf("notes %+v, want one (the copy, once however many cycles skip it)", er)
	}
}

// Steady state: a cycle from 2 that writes nothing, or whose ops repeat the
// previous cycle's verbs and resources in order.
func TestSteadyAt(t *testing.T) {
	get := Op{Verb: "get", Resource: "deployments"}
	apply := Op{Verb: "apply", Resource: "deployments"}
	status := Op{Verb: "patch", Resource: "shops", Subresource: "status"}
	failed := Op{Verb: "apply", Resource: "deployments", Failed: true}
	cycles := func(ops ...[]Op) []Cycle {
		out := make([]Cycle, len(ops))
		for i, o := range ops {
			out[i] = Cycle{N: i + 1, Ops: o}
		}
		return out
	}
	cases := []struct {
		name   string
		cycles []Cycle
		want   int
	}{
		{"a cycle without writes", cycles([]Op{get, apply, status}, []Op{get, status}, []Op{get}, []Op{get}), 3},
		{"reads alone are no writes", cycles([]Op{get, apply}, []Op{get, get}), 2},
		{"a write the cluster refused is no write", cycles([]Op{get, apply}, []Op{get, failed}), 2},
		{"two identical cycles that write", cycles([]Op{get, apply, status}, []Op{get, status}, []Op{get, status}), 3},
		{"identical from cycle 2", cycles([]Op{apply, status}, []Op{apply, status}), 2},
		{"cycle 1 alone is never steady", cycles([]Op{get}), 0},
		{"every cycle writes something new", cycles([]Op{apply}, []Op{status}, []Op{apply}), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := steadyAt(tc.cycles); got != tc.want {
				t.Errorf("steadyAt = %d, want %d", got, tc.want)
			}
		})
	}
}

// A custom child kind without a CRD is served untyped in memory, its plural
// guessed, with one warning naming it and how to give its CRD; a real API
// server (--envtest) needs the CRD.
func TestCustomChildWithoutItsCRD(t *testing.T) {
	outcome, out := runFile(t, "testdata/thirdparty/simulate.yaml", Options{})
	if outcome != Passed {
		t.Errorf("outcome %s, want passed:\n%s", outcome, out)
	}
	warning := `thirdparty/katalog.yaml:15:15: warning: [app] operatorBox.onReconcile.custom[0]: Application (argoproj.io/v1alpha1) has no CRD here: the simulated cluster serves it untyped as "applications", namespaced; give its CRD in spec.crd or spec.crdFiles to serve it as your cluster does`
	if strings.Count(out, "has no CRD here") != 1 || !strings.Contains(out, warning) {
		t.Errorf("the report does not warn once with %q:\n%s", warning, out)
	}
	outcome, out = runFile(t, "testdata/thirdparty/simulate.yaml", Options{Envtest: true})
	for _, s := range []string{"thirdparty/katalog.yaml:15:15: operatorBox.onReconcile.custom[0]: Application (argoproj.io/v1alpha1) has no CRD: --envtest installs only the CRDs the katalog and the spec give; add its CRD to spec.crd or spec.crdFiles", "INVALID"} {
		if !strings.Contains(out, s) {
			t.Errorf("with --envtest the report does not say %q:\n%s", s, out)
		}
	}
	if outcome != Invalid {
		t.Errorf("with --envtest: outcome %s, want invalid", outcome)
	}
}
