package katalog

import (
	"strconv"
	"time"

	"gopkg.in/yaml.v3"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// API versions of the Katalog document this loader accepts.
const (
	APIVersionV1      = "orkestra.orkspace.io/v1"
	APIVersionV1Alpha = "orkestra.konductor.io/v1Alpha"
)

// Katalog is a loaded, shape-validated katalog. It holds no compiled
// expressions: engine.Compile turns it into a plan.
type Katalog struct {
	// File is the path of the main katalog file as given.
	File string
	// Files are all files the katalog was read from (multi-file katalogs).
	Files []string
	// Included are the other files its documents name and the loader read:
	// motifs and include: fragments (CRD manifests and crFiles are on the
	// entries).
	Included   []string
	APIVersion string
	Name       string
	// Description from metadata.description.
	Description string
	// CRDs in document order.
	CRDs []*CRDEntry
	// Warnings found while loading (unimplemented upstream keys, …).
	Warnings Diagnostics
	// Docs are the parsed YAML documents, for `migrate`.
	Docs []*Document
	// Finalizers from spec.finalizers: the default for entries whose
	// operatorBox lists none.
	Finalizers []string
	// Security is the top-level security: section; nil when absent.
	Security *Security
	// Notes are the katalog's user-defined template functions (top-level
	// `notes:`), in document order.
	Notes []*Note
	// AllowedHosts narrows the hosts external calls may reach
	// (spec.allowedHosts: exact names or *.suffix); nil: any the operator
	// permits.
	AllowedHosts    []string
	AllowedHostsPos Pos
	// Patterns are the documents that declare a top-level lifecycle:.
	Patterns []*Pattern
}

// Note is a user-defined template function of the original format: a legacy
// template that a template calls by name, without arguments, to get its
// rendering.
type Note struct {
	Name        string
	Description string
	// Expression is the template (a string value, for its position).
	Expression *Value
	Pos        Pos
	NamePos    Pos
	// Shadow: the note means to replace a built-in function of that name.
	Shadow bool
}

// Document is one parsed YAML file of a katalog.
type Document struct {
	File string
	Root *yaml.Node
}

// Entry returns the CRD entry with the given name, or nil.
func (k *Katalog) Entry(name string) *CRDEntry {
	for _, e := range k.CRDs {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// CRDEntry is one entry of spec.crds: a CRD at one API version, what it
// reconciles into and how it converts.
type CRDEntry struct {
	Name        string
	Pos         Pos
	Description string
	// Enabled is false when the entry says `enabled: false`; such entries load
	// but the operator starts nothing for them.
	Enabled bool
	// DeniesCross is crossAccess: false: cross reads of this entry's custom
	// resources read nothing (upstream's inbound-read switch).
	DeniesCross bool
	// EnrichPods is enrich: [pods]: each workload child is read with the
	// summaries of its pods (_pods), which the pod functions read.
	EnrichPods bool
	APITypes   APITypes
	// CRDFile is the crdFile path, resolved against the katalog's directory.
	CRDFile    string
	CRDFilePos Pos
	// CRD is the entry's CustomResourceDefinition: from crdFile, from a
	// manifest given on the command line (--crd), from the cluster, or
	// synthesised untyped when no schema is available (CRD.Origin says which).
	// Entries of the same CRD share it.
	CRD *CRD
	// CRFiles are sample custom resources (resolved paths).
	CRFiles []string
	// Workers is the number of reconcile workers (default 1).
	Workers int
	// Resync is the informer resync period; 0 means controller-runtime's default.
	Resync time.Duration
	// WorkersPos and ResyncPos point at the setting that was used (the entry
	// key or operatorBox.reconciler's), zero when defaulted.
	WorkersPos, ResyncPos Pos
	// Queue is the work-queue tuning (entry `queue:` or operatorBox.reconciler.queue).
	Queue *Queue
	// Namespaced is the entry's `namespaced:` key; nil when absent (the CRD's
	// scope decides).
	Namespaced *bool
	// DependsOn lists the entries this entry's reconciles wait for.
	DependsOn []*Dependency
	// Normalize rewrites spec fields before the entry's expressions read
	// the custom resource; nil when the entry declares none.
	Normalize *Normalize
	// Namespaces restricts which custom resources the entry reconciles and
	// where its children may go; nil when the entry does not restrict.
	Namespaces *NamespaceRules
	// Box is operatorBox (or the older reconciler:); nil when absent.
	Box        *OperatorBox
	Conversion *Conversion
	// ForceConflict is the entry's forceConflict: whether its children's
	// server-side applies take over fields another manager owns; nil:
	// true, upstream's default.
	ForceConflict *bool
	// Admission holds the entry's validation and mutation rules; nil when
	// it declares none.
	Admission *Admission
	// Endpoints are the entry's routes of the runtime's HTTP API
	// (`endpoints:`); AllEndpoints when absent.
	Endpoints Endpoints
	// Deprecated marks the entry's version deprecated in the CRD that
	// manifests and dev install; DeprecationWarning (nil: the API server's
	// default text) is the Warning header clients then get.
	Deprecated         bool
	DeprecationWarning *string
	DeprecationPos     Pos
	// Pattern is the lifecycle of the katalog document that declares the
	// entry (nil when it declares none).
	Pattern *Pattern

	// reconcilerProfile is operatorBox.reconciler.profile (at
	// reconcilerProfilePath), applied once every profile is read.
	reconcilerProfile     *Value
	reconcilerProfilePath string

	// dir is the directory paths in this entry are relative to; node is the
	// entry as written (a Komposer override merges into it) and listForm
	// whether it was a `- name:` item.
	dir      string
	node     *yaml.Node
	listForm bool
}

// Queue tunes an entry's work queue.
type Queue struct {
	Pos Pos
	// MaxDepth bounds the number of distinct objects waiting; 0 means unbounded.
	MaxDepth int
	// FailureThreshold is the share of failed reconciles (0..1) over which the
	// entry reports itself degraded on /katalog/{entry}/health; 0 means never.
	FailureThreshold float64
	// Behaviour drops new events past a depth (queue.behaviour); nil: none
	// is ever dropped.
	Behaviour *QueueBehaviour
}

// GVK of the entry.
func (e *CRDEntry) GVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: e.APITypes.Group, Version: e.APITypes.Version, Kind: e.APITypes.Kind}
}

// GVR of the entry.
func (e *CRDEntry) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: e.APITypes.Group, Version: e.APITypes.Version, Resource: e.APITypes.Plural}
}

// Schema returns the structural schema of the entry's own version.
func (e *CRDEntry) Schema() *structuralschema.Structural {
	return e.CRD.Schemas[e.APITypes.Version]
}

// APITypes names the custom resource an entry serves. Fields the katalog
// leaves out are derived from the CRD when one is available.
type APITypes struct {
	Group   string
	Version string
	Kind    string
	Plural  string
	Pos     Pos
	// FieldPos holds the position of each field the katalog wrote (group,
	// version, kind, plural); a field absent from it was derived.
	FieldPos map[string]Pos
}

// posOf returns the position of field f, else of apiTypes, else def.
func (a *APITypes) posOf(f string, def Pos) Pos {
	if p, ok := a.FieldPos[f]; ok {
		return p
	}
	if !a.Pos.IsZero() {
		return a.Pos
	}
	return def
}

// CRDOrigin says where a CRD's definition came from.
type CRDOrigin int

const (
	// FromFile: the entry's crdFile.
	FromFile CRDOrigin = iota
	// FromFlag: a manifest given with --crd.
	FromFlag
	// FromCluster: read from the API server.
	FromCluster
	// Untyped: no definition was available; the loader synthesised one whose
	// versions preserve unknown fields, so expressions are not type-checked.
	Untyped
	// BuiltIn: the entry's primary resource is a built-in Kubernetes kind.
	BuiltIn
)

func (o CRDOrigin) String() string {
	return [...]string{"crdFile", "--crd", "cluster", "untyped", "built-in"}[o]
}

// CRD is a loaded CustomResourceDefinition manifest with the structural
// schema of each version.
type CRD struct {
	// Origin says where the definition came from; Path is the manifest file
	// (empty unless FromFile or FromFlag).
	Origin CRDOrigin
	Path   string
	Object *apiextensionsv1.CustomResourceDefinition
	// Schemas by version name.
	Schemas map[string]*structuralschema.Structural
	// Served versions in manifest order; StorageVersion is the one with storage: true.
	Served         []string
	StorageVersion string
}

// GroupKind of the CRD.
func (c *CRD) GroupKind() schema.GroupKind {
	return schema.GroupKind{Group: c.Object.Spec.Group, Kind: c.Object.Spec.Names.Kind}
}

// Serves reports whether the CRD serves version v.
func (c *CRD) Serves(v string) bool {
	for _, s := range c.Served {
		if s == v {
			return true
		}
	}
	return false
}

// Hook names.
const (
	OnCreate    = "onCreate"
	OnReconcile = "onReconcile"
	OnDelete    = "onDelete"
)

// Hooks in the order they run.
var Hooks = []string{OnCreate, OnReconcile, OnDelete}

// OperatorBox is what an entry reconciles into.
type OperatorBox struct {
	Pos        Pos
	Default    bool
	Finalizers []string
	// Hooks by name (OnCreate, OnReconcile, OnDelete); absent hooks are nil.
	Hooks  map[string]*Hook
	Status *Status
	// Gates is preReconcile: conditions that hold reconciles back; nil
	// when absent.
	Gates *Gates
	// Prune is operatorBox.prune: the default of its hooks' declarations;
	// nil when absent.
	Prune *Switch
	// Cleanup is operatorBox.runtime.cleanup; nil when absent.
	Cleanup *Cleanup
	// Events are operatorBox.emit.events, in document order.
	Events []*EmitEvent
	// Observations are the objects the entry observes besides its custom
	// resources and children (cross:, watch:), in declaration order.
	Observations []*Observation
	// External are the HTTP calls its hooks declare (external:), in
	// declaration order.
	External []*ExternalCall
	// NamedDeletes are onDelete declarations that only name a child the
	// box declares (dropped with a warning: garbage collection deletes it);
	// `orkestra migrate` rewrites their names with the child's.
	NamedDeletes []*Resource
}

// Hook is one hook block: resources by kind, in document order.
type Hook struct {
	Name      string
	Pos       Pos
	Resources []*Resource
	// Prune is the hook's prune: the default of its declarations; nil when
	// absent.
	Prune *Switch
}

// Resource is one declared child object.
type Resource struct {
	// Kind is the katalog kind key: deployments, services, custom, …
	Kind  string
	Hook  string
	Index int
	Pos   Pos
	// Fields holds the resource's own fields (name, image, labels, …) with the
	// control keys below removed. Labels written as a key/value list are
	// normalised into a map here.
	Fields *Value
	When   *When
	// Or holds `or:` conditions: any must hold.
	Or *When
	// Reconcile and Prune are the declaration's reconcile: and prune: as
	// written (nil when absent); Modes resolves what they mean.
	Reconcile   *Switch
	Prune       *Switch
	Once        bool
	RotateAfter time.Duration
	// RotateAfterPos points at rotateAfter when set.
	RotateAfterPos Pos
	// ForceConflict is the declaration's forceConflict (upstream v0.7.17):
	// whether its server-side applies take over fields another manager
	// owns; nil: the entry's.
	ForceConflict *bool
	// ForEach makes the declaration one child per item of a list (or entry
	// of a map) field of the custom resource — with several iterators, per
	// combination of their items; nil for a single child.
	ForEach []*ForEach
	// Autoscale computes a workload's replicas on every reconcile; nil
	// when the declaration has none.
	Autoscale *Autoscale
	// ID names the declaration for dependsOn (readiness.go); "" when none.
	ID    string
	IDPos Pos
	// ReadyWhen says when the observed child is ready (all must hold); nil
	// when absent: ready once it exists.
	ReadyWhen *When
	// DependsOn are the declarations (by id) this one waits for.
	DependsOn []*Dependency
	// HasStatus is a custom child's hasStatus: whether its status: block is
	// written (through the status subresource). nil: when status: is given.
	HasStatus *bool
	// Namespaced is a custom child's metadata.namespaced: the scope the
	// katalog declares for its kind (nil: the API server's discovery says).
	Namespaced    *bool
	NamespacedPos Pos

	// nameOnly: an onDelete declaration of only a name (see onDeleteNames).
	nameOnly bool
	// path is the declaration's field path as written (for diagnostics
	// made after decoding, such as profile expansion).
	path string
	// rotateAfterExpr is a rotateAfter written as an expression: a motif's
	// resource may read an input bound to a literal (resolveInputs).
	rotateAfterExpr string
	// Motif is the motif import the declaration comes from; nil for the
	// entry's own. Its expressions read the import's inputs.
	Motif *MotifImport
}

// ForEach is one iterator of a declaration's forEach: the field iterated
// and the name of its item besides the default ones.
type ForEach struct {
	Pos Pos
	// Field is the dot path as written (spec.regions); Path its segments
	// below the custom resource.
	Field    string
	FieldPos Pos
	Path     []string
	// As is the alias of the current item (forEach.as, or the key of kro's
	// form); "" when absent.
	As    string
	AsPos Pos
}

// WritesStatus reports whether a custom child's status: block is written.
func (r *Resource) WritesStatus() bool { return r.HasStatus == nil || *r.HasStatus }

// FieldPath is the resource's path for diagnostics, e.g. onReconcile.deployments[0].
func (r *Resource) FieldPath() string {
	return r.Hook + "." + r.Kind + "[" + strconv.Itoa(r.Index) + "]"
}

// Status declares the status fields an entry writes.
type Status struct {
	Pos    Pos
	Fields []*StatusField
	// Conditions are status.conditions (status_conditions.go).
	Conditions []*StatusCondition
}

// StatusField sets status.<Path> to Value.
type StatusField struct {
	Pos   Pos
	Path  string
	Value *Value
	// Type is the upstream `type:` hint, canonical: string, int, float, bool
	// or auto ("" when absent; the original's spellings str, default,
	// integer and boolean, in any case, are folded in).
	Type string
	When *When
	// ClearOnFalse clears the field while When does not hold (upstream's
	// clearOnFalse); otherwise the stored value stays.
	ClearOnFalse bool
	// Motif is the motif import the field comes from; nil for the entry's
	// own.
	Motif *MotifImport
}

// Conversion declares how objects convert between the CRD's versions.
type Conversion struct {
	Pos Pos
	// Path is where the block was written: conversion (the flat layout)
	// or admission.conversion (upstream's newest).
	Path           string
	StorageVersion string
	StoragePos     Pos
	Paths          []*ConversionPath
}

// ConversionPath maps an object from one version to another.
type ConversionPath struct {
	Pos         Pos
	Index       int
	From        string
	FromPos     Pos
	To          string
	ToPos       Pos
	Spec        *Value
	Status      *Value
	Labels      *Value
	Annotations *Value
	// MayFail is why the path may fail on objects its source schema
	// accepts (`mayFail:`); empty when the path does not say so. Its
	// totality findings are then acknowledged, not warnings or errors.
	MayFail    string
	MayFailPos Pos
}

// Typed reports whether expressions against this CRD are type-checked (its
// definition has real schemas).
func (c *CRD) Typed() bool { return c.Origin != Untyped && c.Origin != BuiltIn }

// Installable reports whether the install may write this definition to a
// cluster: only manifests the katalog author supplied are, never a
// synthesised stand-in or a built-in kind.
func (c *CRD) Installable() bool {
	return c.Origin == FromFile || c.Origin == FromFlag || c.Origin == FromCluster
}
