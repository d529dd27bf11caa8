package operator

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// An upstream-style katalog, composed by a Komposer, whose entry names no
// crdFile (upstream reads the schema from the cluster or runs untyped),
// sets workers/resync/queue under operatorBox.reconciler and relies on the
// katalog-wide spec.finalizers, reconciles against a real API server like
// any other: children from legacy and CEL values, the finalizer on the
// custom resource, health from the queue settings.
// (iAlexeze/orkestra docs/concepts/komposer.md; orkspace/orkestra
// pkg/types/types_operatorbox.go ReconcilerConfig.)
func TestUpstreamStyleUntypedEntry(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"base.yaml": `apiVersion: orkestra.konductor.io/v1Alpha
kind: Katalog
metadata: {name: widgets}
spec:
  finalizers: [test.orkestra.io/cleanup]
  crds:
    - name: widget
      apiTypes: {group: test.orkestra.io, version: v1, kind: Widget}
      reconciler:
        reconciler:
          workers: 1
          queue: {maxDepth: 100, failureThreshold: 0.2}
        status:
          fields:
            - path: phase
              value: "{{ .spec.channel }}"
        onReconcile:
          configMaps:
            - name: "{{ .metadata.name }}-settings"
              data:
                image: "{{ .spec.image }}"
                upper: "${self.spec.channel.upperAscii()}"
`,
		"komposer.yaml": `apiVersion: orkestra.orkspace.io/v1
kind: Komposer
metadata: {name: platform}
imports:
  files: [./base.yaml]
spec:
  crds:
    - name: widget
      reconciler:
        reconciler:
          workers: 2
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plan := loadPlan(t, filepath.Join(dir, "komposer.yaml"))
	if e := plan.Entry("widget"); e.Workers != 2 || e.Source.CRD.Typed() {
		t.Fatalf("entry: workers %d, typed %v", e.Workers, e.Source.CRD.Typed())
	}
	h := startOperator(t, plan)
	create(t, widget(h.ns, "alpha", map[string]any{"image": "nginx:1.27", "channel": "beta"}))
	cr := converged(t, h.ns, "alpha")

	if !slices.Contains(cr.GetFinalizers(), "test.orkestra.io/cleanup") {
		t.Errorf("spec.finalizers not applied: %v", cr.GetFinalizers())
	}
	var cm corev1.ConfigMap
	mustGet(t, h.ns, "alpha-settings", &cm)
	if cm.Data["image"] != "nginx:1.27" || cm.Data["upper"] != "BETA" {
		t.Errorf("config map data %v", cm.Data)
	}
	if phase, _, _ := unstructured.NestedString(cr.Object, "status", "phase"); phase != "beta" {
		t.Errorf("status.phase %q", phase)
	}

	ec := h.controller("widget")
	if ec.failureThreshold() != 0.2 || ec.queueSettings().MaxDepth != 100 {
		t.Errorf("queue settings: threshold %v", ec.failureThreshold())
	}
	st, _ := h.op.Entry("widget")
	if !st.Healthy {
		t.Errorf("entry unhealthy after a clean reconcile: %+v", st)
	}
	// One failure in the last two reconciles is over the 0.2 threshold.
	ec.observe(true)
	if st, _ := h.op.Entry("widget"); st.Healthy {
		t.Errorf("entry healthy with failures over queue.failureThreshold: ratio %v", ec.failureRatio())
	}
}
