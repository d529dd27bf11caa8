package engine

import (
	"time"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/katalog"
)

// Plan is a compiled katalog: immutable once built, safe for concurrent use.
type Plan struct {
	Katalog *katalog.Katalog
	// Entries in katalog order.
	Entries []*Entry
	// Conversions by the CRD's group and kind.
	Conversions map[schema.GroupKind]*Conversion
	Stats       Stats
}

// Stats counts what a plan compiled, for `check`'s summary.
type Stats struct {
	Entries     int
	Expressions int
	Paths       int
}

// Entry returns the entry named name, or nil.
func (p *Plan) Entry(name string) *Entry {
	for _, e := range p.Entries {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// Entry is one compiled CRD version entry.
type Entry struct {
	Name   string
	Source *katalog.CRDEntry
	GVK    schema.GroupVersionKind
	GVR    schema.GroupVersionResource
	// Namespaced is the CRD's scope.
	Namespaced bool
	Enabled    bool
	Workers    int
	Resync     time.Duration
	// Reconciles is true for the entry that reconciles objects of its CRD:
	// the one at the storage version when several entries serve one CRD.
	// The others only watch (resource count, conversion stats).
	Reconciles bool
	// Schema of the entry's version.
	Schema *structuralschema.Structural
	// Hooks by name (katalog.OnCreate, …); resources in apply order.
	Hooks  map[string][]*Resource
	Status []*StatusField
	// Conditions are status.conditions, written beside Ready.
	Conditions []*StatusCondition
	Finalizers []string
	// HasBox is false when the entry declares no operatorBox.
	HasBox bool
	// Gate holds reconciles back while it does not hold (preReconcile's
	// reconcile gate); EnqueueGate keeps custom resources out of the work
	// queue (its enqueue gate). nil: no gate.
	Gate, EnqueueGate Condition
	// GateFail and EnqueueGateFail are the gates' failPolicy
	// (katalog.FailOpen, FailClosed, "" when not given).
	GateFail, EnqueueGateFail string
	// QueueDrop drops new events past a queue depth (queue.behaviour).
	QueueDrop *QueueDrop
	// Sentinels are preReconcile.sentinels, computed for every change of a
	// custom resource (sentinels.go); GateSentinels and
	// EnqueueGateSentinels are the gates' shorthand lists (one true passes
	// the gate, whose conditions are then not evaluated).
	Sentinels, GateSentinels, EnqueueGateSentinels []string
	// Cleanup deletes the custom resource once its condition has held for
	// a while (operatorBox.runtime.cleanup); nil: never.
	Cleanup *Cleanup
	// Events are recorded on the custom resource after a reconcile
	// (operatorBox.emit.events).
	Events []*EmitEvent
	// DependsOn are the entries this entry's reconciles wait for.
	DependsOn []*katalog.Dependency
	// Ordered is true when some child declaration waits for another
	// (dependsOn): children are then made in waves, and deleted in reverse
	// within the finalizer.
	Ordered bool
	// ReadsChildren is true when an expression of the entry reads the
	// custom resource's children back (children, .children): the operator
	// then gives them to every evaluation.
	ReadsChildren bool
	// ReadsManagedFields and ReadsLastApplied are true when an expression
	// of the entry (or a note) may read metadata.managedFields, or the
	// annotation AnnotationLastApplied: the operator's caches, which drop
	// both otherwise, then keep them.
	ReadsManagedFields, ReadsLastApplied bool
	// Namespaces restricts where the entry reconciles and where its children
	// go; nil: everywhere.
	Namespaces *katalog.NamespaceRules
	// Admission is what the entry asks the API server to enforce; nil when
	// it declares no validation or mutation rules.
	Admission *Admission
	// Normalize rewrites spec fields of a copy of the custom resource before
	// anything above reads it (Normalize.Apply); nil: none.
	Normalize *Normalize
	// Observations are the objects the entry observes (cross reads and
	// watches), Remote its cross reads through HTTP (source:), External its
	// HTTP calls, in declaration order.
	Observations []*Observation
	Remote       []*RemoteRead
	External     []*ExternalCall
	// Timed are the values and conditions of the entry that read the clock
	// (weekday, timeInWindow, time: conditions, …): the operator reconciles
	// again when the first of them may change (engine.NextChange).
	Timed []Timed
}

// Cleanup is a compiled operatorBox.runtime.cleanup.
type Cleanup struct {
	Source *katalog.Cleanup
	When   Condition
}

// EmitEvent is a compiled operatorBox.emit.events entry.
type EmitEvent struct {
	Source  *katalog.EmitEvent
	Message *Node
	// When is nil when the event has no condition.
	When Condition
}

// Resource is one compiled child declaration.
type Resource struct {
	Source *katalog.Resource
	Kind   *katalog.KindSpec
	Hook   string
	// Fields is a map node of the simplified fields; name is always present
	// (defaulted to `<cr>-<suffix>` when the katalog omits it).
	Fields *Node
	// ForEach makes the declaration one child per item; nil for one child.
	ForEach *ForEach
	// GVK is the child's kind when it is known before evaluation (every
	// built-in kind; a custom child whose apiVersion and kind are literals);
	// nil otherwise.
	GVK *schema.GroupVersionKind
	// When is nil when the resource has no condition.
	When Condition
	// Modes say whether the child is drift-corrected and whether it is
	// deleted when its condition stops holding, resolved at load.
	Modes       katalog.Modes
	Once        bool
	RotateAfter time.Duration
	// Inputs are the inputs of the motif import the declaration comes
	// from; nil for the entry's own. Its expressions are evaluated in
	// Inputs.Scope.
	Inputs *Inputs
	// Autoscale computes the workload's replicas; nil: the declared ones.
	Autoscale *Autoscale
	// ReadyWhen says when the observed child is ready (self: the child; a
	// forEach child's item as in its fields); nil: ready once it exists.
	ReadyWhen Condition
	// Needs are the declarations this one waits for (dependsOn), Wave its
	// place in the order children are made in: 0 without Needs, else one
	// more than the highest wave it waits for (compile_ready.go).
	Needs []*Need
	Wave  int
}

// StatusField sets status.<Path>.
type StatusField struct {
	Source *katalog.StatusField
	// Path split on dots, relative to status.
	Path  []string
	Value *Node
	When  Condition
	// ClearOnFalse: while When does not hold the field is cleared — set to
	// "" when it holds strings (as upstream writes it), removed otherwise.
	ClearOnFalse bool
	// ClearsToEmpty says a clear writes "" rather than removing the field.
	ClearsToEmpty bool
	// Inputs are the inputs of the motif import the field comes from; nil
	// for the entry's own.
	Inputs *Inputs
}

// Conversion is the compiled conversion of one CRD.
type Conversion struct {
	GroupKind      schema.GroupKind
	CRD            *katalog.CRD
	Entry          string
	StorageVersion string
	// Served versions and their schemas.
	Versions []string
	Schemas  map[string]*structuralschema.Structural
	// Paths by [from, to].
	Paths map[[2]string]*Path
	// Identity is true when every conversion between the CRD's versions
	// only rewrites apiVersion (see isIdentity): no webhook is needed.
	Identity bool
}

// Path is one compiled conversion path.
type Path struct {
	Source   *katalog.ConversionPath
	From, To string
	// ToAPIVersion is group/To, the apiVersion of the path's output.
	ToAPIVersion        string
	Spec, Status        *Node // nil when the path does not map them
	Labels, Annotations *Node
	// Findings are where the path can fail on an object its source
	// schema accepts (the totality findings of its expressions):
	// Acknowledged when the path declares mayFail, else warnings (errors
	// with CompileOptions.StrictTotality).
	Findings katalog.Diagnostics
	// CompileFailed: a value of the path did not compile (the
	// diagnostics say why), so running the path would not do what the
	// katalog says.
	CompileFailed bool
}

// MayFail is the reason the path declares it may fail on objects its source
// schema accepts (its mayFail), or "".
func (p *Path) MayFail() string {
	if p == nil || p.Source == nil {
		return ""
	}
	return p.Source.MayFail
}

// Route returns the paths that convert from → to: the direct path, or the two
// paths through the storage version. ok is false when neither exists.
func (c *Conversion) Route(from, to string) (route []*Path, ok bool) {
	if p := c.Paths[[2]string{from, to}]; p != nil {
		return []*Path{p}, true
	}
	a, b := c.Paths[[2]string{from, c.StorageVersion}], c.Paths[[2]string{c.StorageVersion, to}]
	if a != nil && b != nil {
		return []*Path{a, b}, true
	}
	return nil, false
}
