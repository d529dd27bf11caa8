package operator

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// A cross read (upstream: iAlexeze/orkestra pkg/types/cross.go,
// examples/advanced/14-cross-operator): a widget reads the widget its
// spec.message names and every widget of its team, from the informer; its
// status follows them, and a change to one reconciles exactly the widgets
// that read it.
const crossBox = `
cross:
  - crd: widget
    selector:
      name: "${self.spec.?message.orValue('')}"
    as: peer
  - crd: widget
    selector:
      labelSelector: "team=${self.spec.?channel.orValue('none')}"
    strategy: all
    maxMatches: 3
    as: team
status:
  fields:
    - path: endpoint
      value: "{{ .cross.peer.spec.image }}"
    - path: replicas
      value: "${cross.team.size()}"
    - path: phase
      value: "${has(cross.peer) ? 'peer ' + cross.peer.metadata.name : 'alone'}"
`

func TestCrossReadFollowsTheOtherResource(t *testing.T) {
	h := startOperator(t, widgetPlan(t, crossBox))
	ns := h.ns
	create(t, widget(ns, "p1", map[string]any{"image": "nginx:1"}))
	create(t, widget(ns, "p2", map[string]any{"image": "redis:1"}))
	create(t, widget(ns, "c1", map[string]any{"message": "p1"}))
	create(t, widget(ns, "c2", map[string]any{"message": "p2"}))
	statusIs := func(name, field string, want any) {
		t.Helper()
		eventually(t, name+" status."+field, func() error {
			st, _ := getWidget(t, ns, name).Object["status"].(map[string]any)
			if got := st[field]; fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Errorf("status.%s = %v, want %v", field, got, want)
			}
			return nil
		})
	}
	statusIs("c1", "endpoint", "nginx:1")
	statusIs("c1", "phase", "peer p1")
	statusIs("c2", "endpoint", "redis:1")
	h.idle("widget")

	// The peer changes: its reader follows, the other reader is not
	// reconciled (its custom resource is not even read).
	before := h.client.getsOf("c2")
	updateWidget(t, ns, "p1", func(u *unstructured.Unstructured) { u.Object["spec"].(map[string]any)["image"] = "nginx:2" })
	statusIs("c1", "endpoint", "nginx:2")
	h.idle("widget")
	if got := h.client.getsOf("c2"); got != before {
		t.Errorf("c2 was reconciled %d times after p1 changed; only p1's readers should be", got-before)
	}

	// A reader whose peer does not exist yet: created later, it is read.
	create(t, widget(ns, "c3", map[string]any{"message": "p3"}))
	statusIs("c3", "phase", "alone")
	create(t, widget(ns, "p3", map[string]any{"image": "busybox"}))
	statusIs("c3", "endpoint", "busybox")

	// A label selector: a widget joining the team reconciles the reader.
	create(t, widget(ns, "lead", map[string]any{"channel": "blue"}))
	statusIs("lead", "replicas", 0)
	for _, m := range []string{"m1", "m2"} {
		u := widget(ns, m, map[string]any{"image": "x"})
		u.SetLabels(map[string]string{"team": "blue"})
		create(t, u)
	}
	statusIs("lead", "replicas", 2)
	updateWidget(t, ns, "m2", func(u *unstructured.Unstructured) { u.SetLabels(nil) })
	statusIs("lead", "replicas", 1)

	// More matches than maxMatches: the reconcile fails, naming the read.
	for _, m := range []string{"m3", "m4", "m5"} {
		u := widget(ns, m, map[string]any{"image": "x"})
		u.SetLabels(map[string]string{"team": "blue"})
		create(t, u)
	}
	msg := readyIs(t, ns, "lead", "False", ReasonCrossReadFailed)
	if !strings.Contains(msg, "cross read team (operatorBox.cross[1]): selects 4 objects, more than maxMatches (3)") {
		t.Errorf("Ready message: %s", msg)
	}
	eventWith(t, ns, ReasonCrossReadFailed, "more than maxMatches (3)")
}

// crossAccess: false on the entry read (upstream: examples/advanced/
// 19-endpoint-control/03-fully-dark): its cross reads read nothing — the
// peer that exists is not found, the team is empty, and no maxMatches
// bound is reached.
func TestCrossReadOfADenyingEntryReadsNothing(t *testing.T) {
	h := startOperator(t, widgetPlanWith(t, "      crossAccess: false\n", crossBox))
	ns := h.ns
	create(t, widget(ns, "p1", map[string]any{"image": "nginx:1"}))
	for _, m := range []string{"m1", "m2", "m3", "m4"} {
		u := widget(ns, m, map[string]any{"image": "x"})
		u.SetLabels(map[string]string{"team": "blue"})
		create(t, u)
	}
	u := widget(ns, "c1", map[string]any{"message": "p1", "channel": "blue"})
	create(t, u)
	converged(t, ns, "c1")
	st, _ := getWidget(t, ns, "c1").Object["status"].(map[string]any)
	if st["phase"] != "alone" || fmt.Sprint(st["replicas"]) != "0" || st["endpoint"] != nil && st["endpoint"] != "" {
		t.Errorf("status %v: want phase alone, replicas 0, no endpoint (nothing read)", st)
	}
}

// A watch (upstream: pkg/runtime/informer/fixture/watch, pkg/runtime/
// kordinator/watch_informer.go): a change to an object the entry neither
// owns nor reads reconciles the custom resource upstream's mapping names —
// here the one keyFrom.name names, and the one a label names.
func TestWatchedObjectTriggersReconcile(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
watch:
  - apiVersion: v1
    kind: ConfigMap
    name: shared-config
    on: [update]
    keyFrom:
      name: singleton
  - apiVersion: v1
    kind: Secret
    keyFrom:
      label: example.com/widget
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-out"
      data: {observed: "${self.metadata.name}"}
`))
	ns := h.ns
	for _, n := range []string{"singleton", "other"} {
		create(t, widget(ns, n, map[string]any{}))
		converged(t, ns, n)
	}
	shared := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shared-config", Namespace: ns}, Data: map[string]string{"v": "1"}}
	create(t, shared)
	h.idle("widget")
	reconciles := func(name string) int { return h.client.getsOf(name) }
	s0, o0 := reconciles("singleton"), reconciles("other")
	if s0 == 0 {
		t.Fatal("singleton was never reconciled")
	}

	// on: [update] — the creation above reconciled nothing; an update does.
	if reconciles("singleton") != s0 {
		t.Errorf("creating the watched ConfigMap reconciled singleton (on: [update] only)")
	}
	shared.Data["v"] = "2"
	if err := k8s.Update(t.Context(), shared); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the watched ConfigMap's update to reconcile singleton", func() error {
		if reconciles("singleton") == s0 {
			return fmt.Errorf("not reconciled")
		}
		return nil
	})
	h.idle("widget")
	if reconciles("other") != o0 {
		t.Errorf("other was reconciled by a watch whose keyFrom names singleton")
	}

	// keyFrom.label: the Secret's label names the widget to reconcile.
	o1, s1 := reconciles("other"), reconciles("singleton")
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: ns, Labels: map[string]string{"example.com/widget": "other"}}})
	eventually(t, "the labelled Secret to reconcile other", func() error {
		if reconciles("other") == o1 {
			return fmt.Errorf("not reconciled")
		}
		return nil
	})
	h.idle("widget")
	if reconciles("singleton") != s1 {
		t.Errorf("singleton was reconciled by a Secret labelled for other")
	}
}

// The read index in isolation: readers by name and by selector (in one
// namespace or every one), replaced on the next reconcile and forgotten
// when the reader is gone.
func TestReadIndex(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "test.orkestra.io", Version: "v1", Kind: "Widget"}
	other := schema.GroupVersionKind{Group: "test.orkestra.io", Version: "v1", Kind: "Gadget"}
	x := newReadIndex()
	a, b, c := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}, types.NamespacedName{Namespace: "ns", Name: "c"}
	blue, _ := labels.Parse("team=blue")
	x.set(a, []read{{GVK: gvk, Namespace: "ns", Name: "p1"}})
	x.set(b, []read{{GVK: gvk, Namespace: "ns", Selector: blue}})
	x.set(c, []read{{GVK: gvk, Selector: blue}}) // every namespace
	obj := func(ns, name string, lbl map[string]string) *unstructured.Unstructured {
		u := widget(ns, name, nil)
		u.SetLabels(lbl)
		return u
	}
	readers := func(g schema.GroupVersionKind, o *unstructured.Unstructured) string {
		var out []string
		for _, r := range x.readers(g, o) {
			out = append(out, r.Name)
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	}
	cases := []struct {
		gvk  schema.GroupVersionKind
		o    *unstructured.Unstructured
		want string
	}{
		{gvk, obj("ns", "p1", nil), "a"},
		{gvk, obj("ns", "p2", map[string]string{"team": "blue"}), "b,c"},
		{gvk, obj("ns", "p1", map[string]string{"team": "blue"}), "a,b,c"},
		{gvk, obj("elsewhere", "p1", map[string]string{"team": "blue"}), "c"},
		{gvk, obj("ns", "p3", map[string]string{"team": "red"}), ""},
		{other, obj("ns", "p1", nil), ""},
	}
	for _, tc := range cases {
		if got := readers(tc.gvk, tc.o); got != tc.want {
			t.Errorf("readers of %s %s/%s %v = %q, want %q", tc.gvk.Kind, tc.o.GetNamespace(), tc.o.GetName(), tc.o.GetLabels(), got, tc.want)
		}
	}
	x.set(a, []read{{GVK: gvk, Namespace: "ns", Name: "p9"}})
	if got := readers(gvk, obj("ns", "p1", nil)); got != "" {
		t.Errorf("a's previous read is still indexed: %q", got)
	}
	x.set(b, nil)
	x.set(c, nil)
	if got := readers(gvk, obj("ns", "p2", map[string]string{"team": "blue"})); got != "" {
		t.Errorf("forgotten readers are still indexed: %q", got)
	}
	if len(x.bySelector) != 0 || len(x.reads) != 1 {
		t.Errorf("the index keeps %d selector scopes and %d readers, want 0 and 1", len(x.bySelector), len(x.reads))
	}
}
