package operator

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/orkestra-cel/katalog"
)

// Each of the 14 sentinels against a change of its own field only
// (upstream: orkspace/orkestra pkg/runtime/sentinel/sentinel.go, Compute;
// docs/01-sentinel-names.md), and a create and a delete against an empty
// object.
func TestComputeSentinels(t *testing.T) {
	grace := int64(30)
	now := metav1.Now()
	base := func() *metav1.ObjectMeta {
		return &metav1.ObjectMeta{Name: "a", Namespace: "ns", UID: "u1", ResourceVersion: "1", Generation: 1,
			Labels: map[string]string{"l": "1"}, Annotations: map[string]string{"a": "1"}, Finalizers: []string{"f"},
			CreationTimestamp: metav1.NewTime(now.Add(-time.Hour)),
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "v1", Kind: "X", Name: "o", UID: "o1"}},
			ManagedFields:     []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationApply}}}
	}
	edits := map[string]func(m *metav1.ObjectMeta){
		"generationChanged":                 func(m *metav1.ObjectMeta) { m.Generation = 2 },
		"labelsChanged":                     func(m *metav1.ObjectMeta) { m.Labels["l"] = "2" },
		"annotationsChanged":                func(m *metav1.ObjectMeta) { m.Annotations = nil },
		"deletionStarted":                   func(m *metav1.ObjectMeta) { m.DeletionTimestamp = &now },
		"finalizersChanged":                 func(m *metav1.ObjectMeta) { m.Finalizers = append(m.Finalizers, "g") },
		"nameChanged":                       func(m *metav1.ObjectMeta) { m.Name = "b" },
		"namespaceChanged":                  func(m *metav1.ObjectMeta) { m.Namespace = "other" },
		"generateNameChanged":               func(m *metav1.ObjectMeta) { m.GenerateName = "a-" },
		"uidChanged":                        func(m *metav1.ObjectMeta) { m.UID = "u2" },
		"resourceVersionChanged":            func(m *metav1.ObjectMeta) { m.ResourceVersion = "2" },
		"creationTimestampChanged":          func(m *metav1.ObjectMeta) { m.CreationTimestamp = now },
		"deletionGracePeriodSecondsChanged": func(m *metav1.ObjectMeta) { m.DeletionGracePeriodSeconds = &grace },
		"ownerReferenceChanged":             func(m *metav1.ObjectMeta) { m.OwnerReferences = nil },
		"managedFieldsChanged":              func(m *metav1.ObjectMeta) { m.ManagedFields[0].Manager = "n" },
	}
	if len(edits) != len(katalog.SentinelNames) {
		t.Fatalf("%d edits for %d sentinels", len(edits), len(katalog.SentinelNames))
	}
	for _, changed := range katalog.SentinelNames {
		old, cur := base(), base()
		edits[changed](cur)
		got := computeSentinels(katalog.SentinelNames, old, cur)
		for _, n := range katalog.SentinelNames {
			if got[n] != (n == changed) {
				t.Errorf("changing only what %s watches: %s = %v", changed, n, got[n])
			}
		}
	}
	// A resync: nothing changed.
	for n, v := range computeSentinels(katalog.SentinelNames, base(), base()) {
		if v {
			t.Errorf("an unchanged object: %s true", n)
		}
	}
	// A create compares with an empty object: what the object has is new.
	created := computeSentinels(katalog.SentinelNames, nil, base())
	for _, n := range []string{"generationChanged", "labelsChanged", "nameChanged", "uidChanged", "resourceVersionChanged", "managedFieldsChanged"} {
		if !created[n] {
			t.Errorf("a create: %s false", n)
		}
	}
	if created["deletionStarted"] || created["deletionGracePeriodSecondsChanged"] || created["generateNameChanged"] {
		t.Errorf("a create of an object not being deleted: %v", created)
	}
	if computeSentinels(nil, nil, base()) != nil {
		t.Error("nothing declared, yet sentinels computed")
	}
}

// The issue's case (upstream docs/01-sentinel-names.md, "skipping
// reconciliation when only non-spec fields changed"): with
// enqueueGate.sentinels [generationChanged] a label-only or status-only
// update of the custom resource reconciles nothing, a spec change
// reconciles it.
func TestSentinelGatedEnqueue(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
preReconcile:
  sentinels: [generationChanged]
  enqueueGate:
    sentinels: [generationChanged]
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-out"
      data: {image: "${self.spec.?image.orValue('none')}"}
`))
	ns := h.ns
	create(t, widget(ns, "w", map[string]any{"image": "a"}))
	outIs(t, ns, "w-out", "image", "a")
	h.idle("widget")
	g0 := h.client.getsOf("w")
	quiet := func(what string) {
		t.Helper()
		neverReconciled(t, h.client, "w", g0, what+" reconciles nothing")
	}
	updateWidget(t, ns, "w", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"team": "blue"}) })
	quiet("a label-only update")
	u := getWidget(t, ns, "w")
	_ = unstructured.SetNestedField(u.Object, "by hand", "status", "phase")
	if err := k8s.Status().Update(t.Context(), u); err != nil {
		t.Fatal(err)
	}
	quiet("a status-only update")
	updateWidget(t, ns, "w", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "b", "spec", "image")
	})
	outIs(t, ns, "w-out", "image", "b")
}

// reconcileGate.sentinels: a reconcile brought by anything but a spec
// change is skipped without a word — Ready is not turned to Gated, as the
// custom resource's state does not hold it back — and a spec change runs.
func TestSentinelReconcileGateIsQuiet(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
preReconcile:
  sentinels: [generationChanged, labelsChanged]
  reconcileGate:
    when: "sentinels.generationChanged || sentinels.labelsChanged && self.metadata.?labels.force.orValue('') == 'yes'"
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-out"
      data: {image: "${self.spec.?image.orValue('none')}", team: "${self.metadata.?labels.team.orValue('none')}"}
`))
	ns := h.ns
	create(t, widget(ns, "w", map[string]any{"image": "a"}))
	outIs(t, ns, "w-out", "image", "a")
	converged(t, ns, "w")
	h.idle("widget")
	updateWidget(t, ns, "w", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"team": "blue"}) })
	h.idle("widget")
	outIs(t, ns, "w-out", "team", "none") // held back: labels alone do not pass
	if c, _ := readyCondition(getWidget(t, ns, "w")); c["reason"] == ReasonGated {
		t.Errorf("Ready turned Gated for a change the gate does not reconcile: %v", c)
	}
	updateWidget(t, ns, "w", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"team": "red", "force": "yes"}) })
	outIs(t, ns, "w-out", "team", "red")
	updateWidget(t, ns, "w", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "b", "spec", "image")
	})
	outIs(t, ns, "w-out", "image", "b")
}

// A watch's enqueueGate (upstream types_observe.go WatchEntry.EnqueueGate:
// sentinels computed on the watched object's old and new versions): a
// data change of the watched ConfigMap reconciles nothing, a label change
// reconciles.
func TestWatchEnqueueGateSentinels(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
watch:
  - apiVersion: v1
    kind: ConfigMap
    name: flag
    on: [update]
    keyFrom: {name: singleton}
    enqueueGate:
      sentinels: [labelsChanged]
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-out"
      data: {observed: "${self.metadata.name}"}
`))
	ns := h.ns
	create(t, widget(ns, "singleton", map[string]any{}))
	converged(t, ns, "singleton")
	flag := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "flag", Namespace: ns}, Data: map[string]string{"v": "1"}}
	create(t, flag)
	h.idle("widget")
	s0 := h.client.getsOf("singleton")
	flag.Data["v"] = "2"
	if err := k8s.Update(t.Context(), flag); err != nil {
		t.Fatal(err)
	}
	neverReconciled(t, h.client, "singleton", s0, "a data change of the watched ConfigMap reconciles nothing")
	mustGet(t, ns, "flag", flag)
	flag.Labels = map[string]string{"rollout": "now"}
	if err := k8s.Update(t.Context(), flag); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a label change of the watched ConfigMap to reconcile singleton", func() error {
		if h.client.getsOf("singleton") == s0 {
			return fmt.Errorf("not reconciled")
		}
		return nil
	})
}

// outIs waits for the ConfigMap's data key to be want.
func outIs(t *testing.T, ns, name, key, want string) {
	t.Helper()
	eventually(t, name+"."+key+"="+want, func() error {
		var cm corev1.ConfigMap
		if err := get(ns, name, &cm); err != nil {
			return err
		}
		if got := cm.Data[key]; got != want {
			return fmt.Errorf("%s = %q", key, got)
		}
		return nil
	})
}

// The ledger keeps a change's sentinels until a reconcile takes them, ORs
// coalesced changes, and forgets what was taken.
func TestSentinelLedger(t *testing.T) {
	var l sentinelLedger
	k := types.NamespacedName{Namespace: "ns", Name: "a"}
	l.add(k, map[string]bool{"generationChanged": false, "labelsChanged": true})
	l.add(k, map[string]bool{"generationChanged": true, "labelsChanged": false})
	got := l.take(k)
	if !got["generationChanged"] || !got["labelsChanged"] {
		t.Errorf("coalesced %v", got)
	}
	if again := l.take(k); again != nil {
		t.Errorf("taken twice: %v", again)
	}
	if !strings.Contains(fmt.Sprint(katalog.SentinelNames), "managedFieldsChanged") {
		t.Error("managedFieldsChanged is not a sentinel")
	}
}
