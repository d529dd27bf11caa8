package engine

import (
	"slices"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine/kubeschema"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Sentinels (katalog/sentinels.go) are what changed between two versions of
// an object, computed by the operator when the change arrives and read by
// gates: CEL `sentinels.<name>` (a bool), legacy `{{ <name> }}` ("true" or
// "false", as upstream's resolver adds each declared one as a function,
// pkg/template WithSentinels). Only declared names are readable, so a typo
// or an undeclared one is a load error where it is written.

// SentinelsVar is the variable (CEL) and root key (legacy) gates read
// sentinels from.
const SentinelsVar = "sentinels"

// ObservationGate is a compiled watch's or event's enqueueGate.
type ObservationGate struct {
	Source *katalog.ObservationGate
	// When is its when/or over the observed object (self); nil: none.
	When Condition
	// List is the gate's sentinels shorthand: one true passes the gate.
	List []string
	// Sentinels are computed for each change of an observed object: the
	// gate's list and the entry's preReconcile.sentinels.
	Sentinels []string
	Fail      string
}

// withSentinels is sc with the sentinels of names readable; sc itself
// when there are none.
func (sc compileScope) withSentinels(names []string) compileScope {
	if len(names) == 0 {
		return sc
	}
	cel, legacy := object(nil), object(nil)
	for _, n := range names {
		cel.Properties[n] = scalar("boolean")
		legacy.Properties[n] = scalar("string")
	}
	cel.ValueValidation = &structuralschema.ValueValidation{Required: names}
	return sc.withInput(SentinelsVar, cel, legacy)
}

// gates compiles preReconcile's gates in a scope where the declared
// sentinels are readable.
func (c *compiler) gates(sc compileScope, e *Entry, g *katalog.Gates) {
	gsc := sc.withSentinels(g.Sentinels)
	e.Gate = c.conditions(gsc, g.ReconcileWhen, g.ReconcileOr, "operatorBox.preReconcile")
	e.EnqueueGate = c.conditions(gsc, g.EnqueueWhen, g.EnqueueOr, "operatorBox.preReconcile.enqueueGate")
	e.GateFail, e.EnqueueGateFail = g.ReconcileFail, g.EnqueueFail
	e.Sentinels, e.GateSentinels, e.EnqueueGateSentinels = g.Sentinels, g.ReconcileSentinels, g.EnqueueSentinels
	if slices.Contains(g.Sentinels, katalog.SentinelManagedFields) {
		// The caches drop managedFields unless something reads them.
		e.ReadsManagedFields = true
	}
}

// observationGate compiles a watch's or event's enqueueGate: its
// conditions read the observed object as self (typed by its CRD when the
// katalog has it) and the sentinels of its change.
func (c *compiler) observationGate(sc compileScope, e *Entry, ob *katalog.Observation, declared []string) *ObservationGate {
	g := ob.Gate
	if g == nil {
		return nil
	}
	names := append([]string(nil), g.Sentinels...)
	for _, n := range declared {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	self := observedSchema(ob)
	if ob.CRD != nil && ob.CRD.Origin == katalog.BuiltIn {
		// Built-in kinds: Kubernetes' published schema.
		self = &anyObject
		if s := kubeschema.Schema(ob.GVK); s != nil {
			self = s
		}
	}
	osc := compileScope{entry: sc.entry, self: self, selfVersion: ob.GVK.Version}.withSentinels(names)
	if slices.Contains(names, katalog.SentinelManagedFields) {
		e.ReadsManagedFields = true
	}
	return &ObservationGate{Source: g, When: c.conditions(osc, g.When, g.Or, ob.Field+".enqueueGate"), List: g.Sentinels, Sentinels: names, Fail: g.Fail}
}

// SetSentinels makes a change's sentinels readable in s: every name of
// names, true when vals says so.
func SetSentinels(s *Scope, names []string, vals map[string]bool) {
	if len(names) == 0 {
		return
	}
	cel := make(map[string]any, len(names))
	legacy := make(map[string]any, len(names))
	for _, n := range names {
		cel[n] = vals[n]
		legacy[n] = "false"
		if vals[n] {
			legacy[n] = "true"
		}
	}
	if s.Vars == nil {
		s.Vars = map[string]any{}
	}
	if s.Roots == nil {
		s.Roots = map[string]any{}
	}
	s.Vars[SentinelsVar], s.Roots[SentinelsVar] = cel, legacy
}

// AnyTrue reports whether one of list is true in vals: a gate's sentinels
// shorthand (upstream: GateConditions.SentinelsAllowed).
func AnyTrue(list []string, vals map[string]bool) bool {
	return slices.ContainsFunc(list, func(n string) bool { return vals[n] })
}
