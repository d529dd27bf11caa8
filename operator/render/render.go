// Package render turns one custom resource into the child objects and status
// its katalog entry declares. It is pure (no cluster): the reconciler and
// `orkestra render` share it, so what render prints is what the operator
// applies.
//
// Every resource's simplified fields (image, port, replicas, …) and its
// `when`/`or` condition are evaluated in one engine.Scope over the CR; the
// builders then turn the evaluated fields into the real object with the typed
// Kubernetes API structs (k8s.io/api), converted to unstructured.
package render

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Labels and annotations Orkestra puts on the objects it creates.
const (
	// LabelOwner names the owning custom resource (LabelValue of its name).
	// Only children carrying it are ever deleted.
	LabelOwner = "orkestra-owner"
	// LabelManaged is "true" on every child; the operator's caches of child
	// kinds only hold objects carrying it.
	LabelManaged = "orkestra.orkspace.io/managed"
	// LabelChild names the child (LabelValue of its name). Together with
	// LabelOwner it makes a workload's selector unique: two Deployments of
	// one custom resource never select each other's pods.
	LabelChild = "orkestra.orkspace.io/child"
	// AnnotationGeneratedAt holds the RFC 3339 time a `once: true` secret
	// was generated; rotateAfter counts from it.
	AnnotationGeneratedAt = "orkestra.orkspace.io/generated-at"
	// AnnotationRotateAfter records the secret's rotateAfter, for people
	// reading the object.
	AnnotationRotateAfter = "orkestra.orkspace.io/rotate-after"
)

// Hook groups. The children of onCreate and onReconcile are applied together
// on every reconcile; onDelete runs once the custom resource is being deleted.
var (
	ApplyHooks  = []string{katalog.OnCreate, katalog.OnReconcile}
	DeleteHooks = []string{katalog.OnDelete}
)

// Options tune a render.
type Options struct {
	// Hooks to render; nil renders all three.
	Hooks []string
	// SkipStatus leaves Result.Status nil.
	SkipStatus bool
	// IsNamespaced reports whether a custom child's kind is namespaced; nil
	// assumes it is. The operator answers it from the API server's REST
	// mapping: cluster-scoped children get no namespace and no owner
	// reference (Kubernetes forbids a namespaced owner on them).
	IsNamespaced func(schema.GroupVersionKind) (bool, error)
	// ReadSource reads the object a Secret or ConfigMap copies (fromSecret,
	// fromConfigMap); nil renders copies with their declared data only
	// (offline). Each source is read once per render.
	ReadSource func(gvk schema.GroupVersionKind, key types.NamespacedName) (client.Object, error)
	// Children are the custom resource's observed children in the shape
	// expressions read them (engine.ChildrenView); nil: none observed.
	Children map[string]any
	// SkipAbsentSources skips a copy from another namespace (fromNamespace
	// or toNamespaces) whose source does not exist instead of failing the
	// render: the child is rendered with Skipped saying why. `orkestra
	// simulate` sets it: its cluster holds only the spec's objects, and
	// upstream's simulate skips such copies.
	SkipAbsentSources bool
	// Live are the entry's live inputs (cross reads, external results) as
	// the operator read them; nil: nothing read, no call made (offline).
	Live *engine.Live
}

// Result is what one custom resource renders into.
type Result struct {
	// Entry is the katalog entry rendered.
	Entry string
	// Hooks holds each rendered hook's children in apply order.
	Hooks map[string][]*Child
	// Status holds the evaluated status fields, nested by path relative to
	// status (`phase` → {"phase": …}), typed as evaluated.
	Status map[string]any
	// StatusErrors are the status fields that failed, each an *Error naming
	// the field: as in the original engine, a failing field is left out and
	// the others are written.
	StatusErrors []error
	// Conditions are the evaluated status.conditions (conditions.go);
	// ConditionErrors why some are Unknown.
	Conditions      []metav1.Condition
	ConditionErrors []error
}

// Child is one declared child object of a custom resource.
type Child struct {
	// Resource is the compiled declaration.
	Resource *engine.Resource
	Hook     string
	// Kind is the katalog kind key (deployments, services, custom, …).
	Kind string
	// GVK of the object (for custom: its evaluated apiVersion and kind).
	GVK       schema.GroupVersionKind
	Name      string
	Namespace string
	// When reports whether the child's when/or conditions hold (true when it
	// has none). When it is false only the name, namespace and GVK are
	// evaluated: Fields, Object and Typed are nil.
	When bool
	// Reconciled is true for children that are drift-corrected (the
	// declaration's Modes.Reconcile).
	Reconciled bool
	// Fields are the evaluated simplified fields; their keys are the fields
	// the katalog manages (what drift correction compares).
	Fields map[string]any
	// Object is the built object.
	Object *unstructured.Unstructured
	// Typed is the same object as its k8s.io/api struct (nil for custom).
	Typed client.Object
	// CopyOf is the object a Secret or ConfigMap copies; nil when none.
	CopyOf *types.NamespacedName
	// Declaration is the declaration label of a forEach child ("" else):
	// the operator deletes the children of items that are gone by it.
	Declaration string
	// Item names a forEach child's item for messages ("" else).
	Item string
	// scope is what the child's expressions were evaluated in; item is a
	// forEach child's item (nil else).
	scope *engine.Scope
	item  *engine.Item
	// Status is a custom child's declared status, written through the
	// status subresource once the object exists; nil when none.
	Status map[string]any
	// Skipped says why a passing child is neither applied nor deleted
	// (Options.SkipAbsentSources); "" for every other child.
	Skipped string
	// Scale is what an autoscaled workload's conditions say (nil: it has
	// no autoscale:, or its condition failed); the operator decides the
	// replicas from it and the live object (ScaleTo).
	Scale *Scale
	// ReplicasOwner names the HorizontalPodAutoscaler child that scales
	// this workload ("" when none): its replicas are not drift-corrected.
	ReplicasOwner string
}

// Key identifies the child's object: kind key (for custom children with
// their group and kind), namespace and name.
func (c *Child) Key() string {
	kind := c.Kind
	if c.Kind == "custom" {
		kind += "(" + c.GVK.GroupKind().String() + ")"
	}
	return kind + "/" + c.Namespace + "/" + c.Name
}

// describe names the declaration (and forEach item) a child comes from.
func (c *Child) describe() string {
	if c.Item == "" {
		return c.Resource.Fields.Field
	}
	return c.Resource.Fields.Field + " (" + c.Item + ")"
}

// String names the child for messages: `Deployment default/shop`.
func (c *Child) String() string {
	kind := c.GVK.Kind
	if kind == "" {
		kind = c.Kind
	}
	if c.Namespace == "" {
		return kind + " " + c.Name
	}
	return kind + " " + c.Namespace + "/" + c.Name
}

// Error is a failure to render one declaration; it names the custom
// resource, the declaration and the cause.
type Error struct {
	Object string // Kind namespace/name of the custom resource
	Field  string // e.g. operatorBox.onReconcile.deployments[0]
	Err    error
}

func (e *Error) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("rendering %s: %v", e.Object, e.Err)
	}
	return fmt.Sprintf("rendering %s: %s: %v", e.Object, e.Field, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Render evaluates every hook and the status of entry over cr.
func Render(entry *engine.Entry, cr *unstructured.Unstructured) (*Result, error) {
	return RenderWith(entry, cr, Options{})
}

// RenderWith renders the hooks opts names (all when nil) and, unless
// opts.SkipStatus, the status.
func RenderWith(entry *engine.Entry, cr *unstructured.Unstructured, opts Options) (*Result, error) {
	r := &renderer{entry: entry, cr: cr, opts: opts}
	self, err := entry.Normalize.Apply(cr.Object)
	if err != nil {
		return nil, r.errorf("normalize", err)
	}
	kids := opts.Children
	if kids == nil && entry.ReadsChildren {
		// None observed: every declared kind, empty.
		kids = ChildrenView(entry, nil)
	}
	live := opts.Live
	if live == nil {
		live = entry.NewLive()
	}
	r.scope = entry.Scope(self, kids, live)
	return r.render()
}

type renderer struct {
	entry *engine.Entry
	cr    *unstructured.Unstructured
	scope *engine.Scope
	opts  Options
	// sources are the objects copies read, by kind and key.
	sources map[string]client.Object
}

func (r *renderer) crName() string {
	ns := r.cr.GetNamespace()
	kind := r.cr.GetKind()
	if kind == "" {
		kind = r.entry.GVK.Kind
	}
	if ns == "" {
		return kind + " " + r.cr.GetName()
	}
	return kind + " " + ns + "/" + r.cr.GetName()
}

func (r *renderer) errorf(field string, err error) error {
	var ee *engine.EvalError
	if errors.As(err, &ee) {
		field = "" // it names its field, expression and position
	}
	return &Error{Object: r.crName(), Field: field, Err: err}
}

func (r *renderer) render() (*Result, error) {
	hooks := r.opts.Hooks
	if hooks == nil {
		hooks = katalog.Hooks
	}
	res := &Result{Entry: r.entry.Name, Hooks: map[string][]*Child{}}
	// Evaluate every child of the requested hooks first: services pick the
	// workload they select among the passing workloads of their group.
	for _, h := range hooks {
		for _, rs := range r.entry.Hooks[h] {
			cs, err := r.declaration(rs)
			if err != nil {
				return nil, err
			}
			res.Hooks[h] = append(res.Hooks[h], cs...)
		}
	}
	if err := r.checkCollisions(res, hooks); err != nil {
		return nil, err
	}
	for _, h := range hooks {
		group := ApplyHooks
		if h == katalog.OnDelete {
			group = DeleteHooks
		}
		var workloads []*Child
		for _, g := range group {
			for _, c := range res.Hooks[g] {
				if c.When && (c.Kind == "deployments" || c.Kind == "replicaSets" || c.Kind == "statefulSets") {
					workloads = append(workloads, c)
				}
			}
		}
		for _, c := range res.Hooks[h] {
			if !c.When {
				continue
			}
			if err := r.build(c, workloads); err != nil {
				if r.opts.SkipAbsentSources && c.copiesAcrossNamespaces() && apierrors.IsNotFound(err) {
					c.Skipped = fmt.Sprintf("a copy of %s, which does not exist", c.CopyOf)
					continue
				}
				return nil, r.errorf(c.Resource.Fields.Field, err)
			}
			if err := r.scaleConditions(c); err != nil {
				return nil, err
			}
		}
	}
	if err := r.hpaOwners(res, hooks); err != nil {
		return nil, err
	}
	if !r.opts.SkipStatus {
		res.Status, res.StatusErrors = r.status()
		res.Conditions, res.ConditionErrors = r.conditions()
	}
	return res, nil
}

// checkCollisions fails when two passing declarations of one hook name the
// same object: one would overwrite the other on every reconcile. (The
// compiler rejects the provable cases at load.)
func (r *renderer) checkCollisions(res *Result, hooks []string) error {
	for _, h := range hooks {
		seen := map[string]*Child{}
		for _, c := range res.Hooks[h] {
			if !c.When {
				continue
			}
			if prev, dup := seen[c.Key()]; dup {
				return r.errorf(c.describe(), fmt.Errorf("names the same object, %s, as %s, and both conditions hold: one would overwrite the other; give each its own name, or make their conditions exclusive", c, prev.describe()))
			}
			seen[c.Key()] = c
		}
	}
	return nil
}

// identityFields are the fields that say which object(s) a declaration
// names: all that is evaluated when its condition fails.
var identityFields = []string{"name", "namespace", "apiVersion", "kind", "toNamespaces"}

// evaluate evaluates the child's condition and fields (only identity fields
// when the condition fails).
func (r *renderer) evaluate(rs *engine.Resource, scope *engine.Scope) (*Child, error) {
	field := rs.Fields.Field
	c := &Child{
		Resource:   rs,
		Hook:       rs.Hook,
		Kind:       rs.Kind.Key,
		When:       true,
		Reconciled: rs.Modes.Reconcile,
		scope:      scope,
	}
	if rs.When != nil {
		ok, err := rs.When.Eval(scope)
		if err != nil {
			return nil, r.errorf(field+".when", fmt.Errorf("evaluating %s: %w", rs.When.Source(), err))
		}
		c.When = ok
	}
	var fields map[string]any
	if c.When {
		v, _, err := rs.Fields.Eval(scope)
		if err != nil {
			return nil, r.errorf(field, err)
		}
		fields, _ = v.(map[string]any)
		c.Fields = fields
	} else {
		// Only what identifies the object: the reconciler may have to
		// delete it.
		fields = map[string]any{}
		for _, key := range identityFields {
			n := rs.Fields.Get(key)
			if n == nil {
				continue
			}
			v, ok, err := n.Eval(scope)
			if err != nil {
				return nil, r.errorf(field, err)
			}
			if ok {
				fields[key] = v
			}
		}
	}
	f := fieldReader{fields: fields, base: field}
	c.Name = f.str("name")
	if c.Name == "" {
		return nil, r.errorf(field+".name", fmt.Errorf("the name is empty"))
	}
	if rs.Kind.Open {
		apiVersion, kind := f.str("apiVersion"), f.str("kind")
		if apiVersion == "" || kind == "" {
			return nil, r.errorf(field, fmt.Errorf("a custom resource needs apiVersion and kind, got %q and %q", apiVersion, kind))
		}
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			return nil, r.errorf(field+".apiVersion", err)
		}
		c.GVK = gv.WithKind(kind)
	} else {
		c.GVK = schema.FromAPIVersionAndKind(rs.Kind.APIVersion, rs.Kind.Kind)
	}
	if f.err != nil {
		return nil, f.err
	}
	namespaced, err := r.namespaced(rs, c.GVK)
	if err != nil {
		return nil, r.errorf(field, err)
	}
	if namespaced {
		c.Namespace = f.str("namespace")
		if c.Namespace == "" {
			c.Namespace = r.cr.GetNamespace()
		}
		// toNamespaces, when declared, names the namespaces instead.
		if c.Namespace == "" && rs.Fields.Get("toNamespaces") == nil {
			return nil, r.errorf(field+".namespace", fmt.Errorf("%s is cluster-scoped, so %s %s needs namespace: or toNamespaces:", r.crName(), c.GVK.Kind, c.Name))
		}
	}
	return c, f.err
}

// namespaced says whether a child of gvk lives in a namespace: built-in
// kinds say so in the catalogue; a custom kind's scope comes from the API
// server (opts.IsNamespaced), else from the declaration's metadata.namespaced,
// else namespaced. A declared scope the API server contradicts is an error
// (upstream: pkg/types/custom_resource.go).
func (r *renderer) namespaced(rs *engine.Resource, gvk schema.GroupVersionKind) (bool, error) {
	if !rs.Kind.Open {
		return !rs.Kind.ClusterScoped, nil
	}
	declared := rs.Source.Namespaced
	if r.opts.IsNamespaced == nil {
		return declared == nil || *declared, nil
	}
	ns, err := r.opts.IsNamespaced(gvk)
	if err != nil {
		return false, fmt.Errorf("%s: %w", gvk, err)
	}
	if declared != nil && *declared != ns {
		scope := map[bool]string{true: "namespaced", false: "cluster-scoped"}
		return false, fmt.Errorf("metadata.namespaced says %s is %s, but the API server serves it %s; correct or remove metadata.namespaced (at %s)", gvk.Kind, scope[*declared], scope[ns], rs.Source.NamespacedPos)
	}
	return ns, nil
}

// build builds the child's object with its kind's builder.
func (r *renderer) build(c *Child, workloads []*Child) error {
	b := &builder{
		r:         r,
		c:         c,
		f:         fieldReader{fields: c.Fields, base: c.Resource.Fields.Field},
		workloads: workloads,
	}
	obj, err := KindOf(c.Kind).Build(b)
	if err != nil {
		return err
	}
	if b.f.err != nil {
		return b.f.err
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		c.Object = u
		return nil
	}
	c.Typed = obj
	u, err := toUnstructured(obj)
	if err != nil {
		return err
	}
	c.Object = u
	return nil
}

// meta builds the child's ObjectMeta: name, namespace, the katalog's labels
// and annotations, Orkestra's labels and the owner reference.
func (b *builder) meta() metav1.ObjectMeta {
	m := metav1.ObjectMeta{
		Name:        b.c.Name,
		Namespace:   b.c.Namespace,
		Labels:      b.f.strMap("labels"),
		Annotations: b.f.strMap("annotations"),
	}
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	for k, v := range b.r.ownerLabels() {
		m.Labels[k] = v
	}
	if b.c.Declaration != "" {
		m.Labels[LabelDeclaration] = b.c.Declaration
	}
	if ref := b.r.ownerRef(b.c); ref != nil {
		m.OwnerReferences = []metav1.OwnerReference{*ref}
	}
	return m
}

// ownerLabels are the labels every child carries.
func (r *renderer) ownerLabels() map[string]string {
	return map[string]string{
		LabelOwner:   LabelValue(r.cr.GetName()),
		LabelManaged: "true",
	}
}

// ownerRef is the controller reference to the custom resource, nil when
// Kubernetes would not accept one (the CR has no UID yet — an offline render
// — or the child lives in another namespace or is cluster-scoped while the CR
// is namespaced).
func (r *renderer) ownerRef(c *Child) *metav1.OwnerReference {
	if r.cr.GetUID() == "" {
		return nil
	}
	if ns := r.cr.GetNamespace(); ns != "" && c.Namespace != ns {
		return nil
	}
	apiVersion := r.cr.GetAPIVersion()
	if apiVersion == "" {
		apiVersion = r.entry.GVK.GroupVersion().String()
	}
	kind := r.cr.GetKind()
	if kind == "" {
		kind = r.entry.GVK.Kind
	}
	t := true
	return &metav1.OwnerReference{
		APIVersion:         apiVersion,
		Kind:               kind,
		Name:               r.cr.GetName(),
		UID:                r.cr.GetUID(),
		Controller:         &t,
		BlockOwnerDeletion: &t,
	}
}

// IsOwnedBy reports whether obj is a child of cr: it carries the
// orkestra-owner label naming cr and, when it has a controller reference, that
// reference is cr.
func IsOwnedBy(obj metav1.Object, cr metav1.Object) bool {
	if obj.GetLabels()[LabelOwner] != LabelValue(cr.GetName()) {
		return false
	}
	if ref := metav1.GetControllerOf(obj); ref != nil && cr.GetUID() != "" && ref.UID != cr.GetUID() {
		return false
	}
	return true
}

// LabelValue makes s usable as a label value: names longer than 63
// characters are cut to 54 and suffixed with a hash of the whole name.
func LabelValue(s string) string {
	if len(s) <= 63 {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return s[:54] + "-" + hex.EncodeToString(sum[:])[:8]
}

// toUnstructured converts a typed object, dropping what the builders never
// set and the server fills in (status, empty strategy, …), so that rendered
// objects read like hand-written manifests.
func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	delete(m, "status")
	cleanEmpty(m, "spec", "strategy")
	cleanEmpty(m, "spec", "updateStrategy")
	cleanEmpty(m, "spec", "template", "metadata")
	cleanEmpty(m, "spec", "jobTemplate", "metadata")
	cleanEmpty(m, "spec", "jobTemplate", "spec", "template", "metadata")
	cleanEmpty(m, "spec", "resources")
	for _, podSpec := range [][]string{{"spec"}, {"spec", "template", "spec"}, {"spec", "jobTemplate", "spec", "template", "spec"}} {
		ps, ok := nested(m, podSpec...)
		if !ok {
			continue
		}
		for _, key := range []string{"containers", "initContainers"} {
			cs, _ := ps[key].([]any)
			for _, c := range cs {
				if cm, ok := c.(map[string]any); ok {
					cleanEmpty(cm, "resources")
				}
			}
		}
	}
	if vcts, ok := nestedSlice(m, "spec", "volumeClaimTemplates"); ok {
		for _, v := range vcts {
			if vm, ok := v.(map[string]any); ok {
				delete(vm, "status")
			}
		}
	}
	return &unstructured.Unstructured{Object: m}, nil
}

func nested(m map[string]any, path ...string) (map[string]any, bool) {
	for _, p := range path {
		next, ok := m[p].(map[string]any)
		if !ok {
			return nil, false
		}
		m = next
	}
	return m, true
}

func nestedSlice(m map[string]any, path ...string) ([]any, bool) {
	parent, ok := nested(m, path[:len(path)-1]...)
	if !ok {
		return nil, false
	}
	s, ok := parent[path[len(path)-1]].([]any)
	return s, ok
}

// cleanEmpty deletes the map at path when it is empty.
func cleanEmpty(m map[string]any, path ...string) {
	parent, ok := nested(m, path[:len(path)-1]...)
	if !ok {
		return
	}
	last := path[len(path)-1]
	if v, ok := parent[last].(map[string]any); ok && len(v) == 0 {
		delete(parent, last)
	}
}
