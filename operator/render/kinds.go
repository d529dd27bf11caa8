package render

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/katalog"
)

// A resource kind lives in two places only: its row in katalog.ResourceKinds
// (its katalog fields and their types, its apply order, its `.children`
// keys: the loader and the compiler need them and import nothing from the
// operator), and everything else here, one file per
// family (kind_workloads.go, kind_network.go, kind_config.go, kind_rbac.go,
// kind_policy.go, kind_cluster.go, kind_custom.go): how the object is built, how drift in the
// fields the katalog manages is corrected, which of them cannot change in
// place. The operator's appliers and the install generator's RBAC read this
// table; TestEveryKindIsComplete fails when a kind lacks a part.

// Lifecycle says how a drift-corrected child of a kind changes.
type Lifecycle int

const (
	// UpdateInPlace: drift is corrected with an update of the live object
	// (a field listed in Kind.Recreates is corrected by recreating it).
	UpdateInPlace Lifecycle = iota
	// CreateOnly: created once and never compared (Jobs run once). Set by
	// register from katalog.KindSpec.CreateOnly, which owns the fact.
	CreateOnly
	// Recreate: any drift is corrected by deleting and creating the object
	// (a Pod's spec is immutable).
	Recreate
)

// Kind is what the runtime knows about one resource kind beyond its katalog
// fields.
type Kind struct {
	// Build builds the object from the evaluated fields.
	Build func(b *builder) (client.Object, error)
	// Drift compares want with live in the fields m manages and corrects
	// live in place, recording what differed in d. nil for CreateOnly kinds.
	Drift func(d *Drift, m Managed, want, live client.Object)
	// Lifecycle says how drift is corrected.
	Lifecycle Lifecycle
	// Recreates are the katalog fields that cannot change on a live object:
	// drift in one of them (when the declaration sets it) recreates it.
	Recreates []string
	// Grants are permissions the operator needs besides those on the kind
	// itself to apply it (manifests derives the install's RBAC from them):
	// the API server lets a Role grant only what its creator holds, or
	// what escalate allows; a binding needs bind on the role it names.
	Grants []Grant
}

// Grant is one extra permission: verbs on resources of a group.
type Grant struct {
	Group     string
	Resources []string
	Verbs     []string
}

// Kinds holds every resource kind by its katalog key.
var Kinds = map[string]*Kind{}

func register(key string, k *Kind) {
	if _, dup := Kinds[key]; dup {
		panic("render: kind " + key + " registered twice")
	}
	if spec := katalog.ResourceKinds[key]; spec != nil && spec.CreateOnly {
		k.Lifecycle = CreateOnly
	}
	Kinds[key] = k
}

// KindOf returns the kind of a katalog key; it panics on a key that is not
// registered (TestEveryKindIsComplete proves that none is missing).
func KindOf(key string) *Kind {
	k, ok := Kinds[key]
	if !ok {
		panic(fmt.Sprintf("render: resource kind %q has no entry in render.Kinds", key))
	}
	return k
}

// Drift is the outcome of one comparison between a child's desired object
// and the live one.
type Drift struct {
	// Fields that differ (katalog field names), sorted.
	Fields []string
	// Recreate is true when a differing field cannot be updated in place.
	Recreate bool
}

func (d *Drift) add(field string) {
	for _, f := range d.Fields {
		if f == field {
			return
		}
	}
	d.Fields = append(d.Fields, field)
}

// None reports whether nothing differs.
func (d *Drift) None() bool { return len(d.Fields) == 0 }

// Managed is the set of katalog fields a declaration sets: only they are
// compared.
type Managed map[string]any

func (m Managed) has(key string) bool {
	_, ok := m[key]
	return ok
}

// Diff compares the child's desired object with live (an object of the same
// kind, typed for built-in kinds), correcting live in place.
func Diff(c *Child, live client.Object) (Drift, error) {
	var d Drift
	k := KindOf(c.Kind)
	if k.Lifecycle == CreateOnly {
		return d, nil
	}
	want := client.Object(c.Object)
	if c.Typed != nil {
		want = c.Typed
	}
	if fmt.Sprintf("%T", want) != fmt.Sprintf("%T", live) {
		return d, fmt.Errorf("comparing %s: the live object is a %T, not a %T", c, live, want)
	}
	m := Managed(c.Fields)
	diffMeta(&d, want, live)
	k.Drift(&d, m, want, live)
	if k.Lifecycle == Recreate && !d.None() {
		d.Recreate = true
	}
	sort.Strings(d.Fields)
	return d, nil
}

// diffMeta compares labels and annotations as subsets: others may add their
// own.
func diffMeta(d *Drift, want, live metav1.Object) {
	if !subsetMap(want.GetLabels(), live.GetLabels()) {
		live.SetLabels(mergeMap(live.GetLabels(), want.GetLabels()))
		d.add("labels")
	}
	if !subsetMap(want.GetAnnotations(), live.GetAnnotations()) {
		live.SetAnnotations(mergeMap(live.GetAnnotations(), want.GetAnnotations()))
		d.add("annotations")
	}
}

// KindKeys returns the registered kind keys, sorted.
func KindKeys() []string {
	keys := make([]string, 0, len(Kinds))
	for k := range Kinds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// builder builds one child's object from its evaluated fields.
type builder struct {
	r *renderer
	c *Child
	f fieldReader
	// workloads are the passing Deployments, ReplicaSets and StatefulSets of the child's
	// hook group (a Service without selector fronts one of them).
	workloads []*Child
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}
