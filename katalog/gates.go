package katalog

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Entry dependencies and reconcile gates (upstream: pkg/types/
// types_dependson.go, pkg/katalog/docs/02-dependencies.md,
// pkg/katalog/pre_reconcile.go).

// dependsOn decodes an entry's dependsOn (dependson.go): entries it waits
// for to be started (the default) or healthy.
func (d *decoder) dependsOn(n *yaml.Node, path string) []*Dependency {
	return d.dependencies(n, path, "entry", []string{DependencyStarted, DependencyHealthy})
}

// checkDependencies validates dependsOn across entries: each names an
// enabled entry of the katalog, none itself, and there is no cycle.
func checkDependencies(k *Katalog, diags *Diagnostics) {
	byName := map[string]*CRDEntry{}
	for _, e := range k.CRDs {
		byName[e.Name] = e
	}
	add := func(e *CRDEntry, p Pos, format string, args ...any) {
		*diags = append(*diags, Diagnostic{Pos: p, Entry: e.Name, Field: "dependsOn", Message: fmt.Sprintf(format, args...)})
	}
	for _, e := range k.CRDs {
		for _, dep := range e.DependsOn {
			other, ok := byName[dep.Name]
			switch {
			case dep.Name == e.Name:
				add(e, dep.Pos, "an entry cannot depend on itself")
			case !ok:
				add(e, dep.Pos, "dependsOn names %q, which is not an entry of this katalog%s (upstream's validation refuses it too: dependsOn orders entries of one runtime; to wait for an object another operator serves, read it with operatorBox.cross, giving its apiVersion and kind, and gate the children on it with when:)", dep.Name, DidYouMean(dep.Name, entryNames(k)))
			case !other.Enabled:
				add(e, dep.Pos, "dependsOn names %q, which is disabled (enabled: false) and so never starts; enable it or remove the dependency", dep.Name)
			}
		}
	}
	if cycle := dependencyCycle(k, byName); cycle != nil {
		e := byName[cycle[0]]
		add(e, e.DependsOn[0].Pos, "dependsOn makes a cycle: %s; no entry of it could ever start", strings.Join(cycle, " → "))
	}
}

func entryNames(k *Katalog) []string {
	names := make([]string, 0, len(k.CRDs))
	for _, e := range k.CRDs {
		names = append(names, e.Name)
	}
	sort.Strings(names)
	return names
}

// dependencyCycle returns one cycle of entry names (first name repeated at
// the end), nil when there is none.
func dependencyCycle(k *Katalog, byName map[string]*CRDEntry) []string {
	names := make([]string, len(k.CRDs))
	for i, e := range k.CRDs {
		names[i] = e.Name
	}
	return findCycle(names, func(name string) []*Dependency { return byName[name].DependsOn })
}

// Gates is operatorBox.preReconcile: while its conditions do not hold, a
// custom resource is not reconciled (reconcileGate, or the older form with
// when:/or: directly under preReconcile; its Ready condition says so), or
// not even enqueued (enqueueGate).
type Gates struct {
	Pos Pos
	// Reconcile conditions: when (all) and or (any); Enqueue likewise.
	ReconcileWhen, ReconcileOr *When
	EnqueueWhen, EnqueueOr     *When
	// ReconcileFail and EnqueueFail are the gates' failPolicy (upstream
	// v0.7.16): FailOpen passes the gate when its condition cannot be
	// evaluated, FailClosed holds it; "" when not given.
	ReconcileFail, EnqueueFail string
	// Sentinels are preReconcile.sentinels: the ones computed for the
	// entry's custom resources (sentinels.go). ReconcileSentinels and
	// EnqueueSentinels are a gate's shorthand list: the gate passes when
	// one of them is true, and its when/or are not evaluated (upstream:
	// pkg/katalog/pre_reconcile.go, evaluateGate).
	Sentinels                            []string
	ReconcileSentinels, EnqueueSentinels []string
}

// Gate fail policies.
const (
	FailOpen   = "open"
	FailClosed = "closed"
)

// gateKeys are the keys of reconcileGate and enqueueGate; the others of
// upstream's gates are refused (upstream.go says why).
var (
	gateKeys          = []string{"when", "or", "anyOf", "failPolicy", "sentinels"}
	unimplementedGate = []string{"external", "eventAware"}
)

// preReconcile decodes operatorBox.preReconcile.
func (d *decoder) preReconcile(n *yaml.Node, path string) *Gates {
	o := d.mapping(n, path, preReconcileKeys, []string{"external"})
	g := &Gates{Pos: d.pos(Resolve(n))}
	if f, ok := o["sentinels"]; ok {
		g.Sentinels = d.sentinelList(f.value, path+".sentinels")
	}
	g.ReconcileWhen, g.ReconcileOr = d.gateConditions(o, path)
	if f, ok := o["reconcileGate"]; ok {
		if g.ReconcileWhen != nil || g.ReconcileOr != nil {
			d.errorf(f.key, path+".reconcileGate", "the reconcile gate is given twice: when/or directly under preReconcile and reconcileGate; keep one")
		}
		g.ReconcileWhen, g.ReconcileOr, g.ReconcileFail, g.ReconcileSentinels = d.gate(f.value, path+".reconcileGate", g.Sentinels, false)
	}
	if f, ok := o["enqueueGate"]; ok {
		g.EnqueueWhen, g.EnqueueOr, g.EnqueueFail, g.EnqueueSentinels = d.gate(f.value, path+".enqueueGate", g.Sentinels, false)
	}
	return g
}

// gate decodes a gate: its conditions, failPolicy and sentinels list, each
// declared in declared unless selfDeclaring (a watch's enqueueGate). With a
// sentinels list the list alone decides, as upstream's: when/or beside it
// are not evaluated, and a warning says so.
func (d *decoder) gate(n *yaml.Node, path string, declared []string, selfDeclaring bool) (when, or *When, fail string, sentinels []string) {
	o := d.mapping(n, path, gateKeys, unimplementedGate)
	when, or = d.gateConditions(o, path)
	fail = d.failPolicy(o, path)
	sentinels = d.gateSentinels(o, path, declared, selfDeclaring)
	if len(sentinels) > 0 && (when != nil || or != nil) {
		d.warnf(o["sentinels"].key, path+".sentinels", "with a sentinels list the gate passes when one of them is true and its when/or are not evaluated (as upstream); to combine them, read the sentinels in when: (CEL sentinels.<name>, legacy {{ <name> }}) and remove the list")
	}
	return when, or, fail, sentinels
}

// failPolicy decodes a gate's failPolicy: open or closed.
func (d *decoder) failPolicy(o object, path string) string {
	f, ok := o["failPolicy"]
	if !ok {
		return ""
	}
	switch p := d.str(f.value, path+".failPolicy"); p {
	case FailOpen, FailClosed:
		return p
	default:
		d.errorf(f.value, path+".failPolicy", "failPolicy must be open (the gate passes when its condition cannot be evaluated) or closed (it holds), got %q%s", p, DidYouMean(p, []string{FailOpen, FailClosed}))
		return ""
	}
}

func (d *decoder) gateConditions(o object, path string) (when, or *When) {
	if f, ok := o["when"]; ok {
		when = d.when(f.value, join(path, "when"))
	}
	for _, key := range []string{"or", "anyOf"} {
		if f, ok := o[key]; ok {
			if or != nil {
				d.errorf(f.key, join(path, key), "both or and its older name anyOf are set; keep or")
				continue
			}
			or = d.when(f.value, join(path, key))
		}
	}
	return when, or
}
