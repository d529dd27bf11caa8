package operator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// normalize rewrites spec fields on a copy of the custom resource before
// the entry's children and status read it, and never writes them back
// (iAlexeze/orkestra examples/use-cases/normalize; the resolver step in
// pkg/resources/template/resolver_normalize.go). Every value reads the
// object as stored; a field the CRD does not declare exists on the copy
// only; audit lists what changed under ._normalizeChanges.
func TestNormalizeRewritesWhatTheEntryReads(t *testing.T) {
	plan := widgetPlanWith(t, `      normalize:
        audit: true
        spec:
          channel: '{{ .spec.channel | default "stable" | toLower | trimSpace }}'
          replicas: "{{ default 1 .spec.replicas }}"
          image: "${self.spec.image.startsWith('registry.local/') ? self.spec.image : 'registry.local/' + self.spec.image}"
          tier.name: '{{ .spec.channel | toUpper }}'
        types:
          tier.name: string
`, `onReconcile:
  configMaps:
    - name: "{{ .metadata.name }}-normalized"
      data:
        channel: "{{ .spec.channel }}"
        replicas: "${string(self.spec.replicas)}"
        image: "{{ .spec.image }}"
        tier: "{{ .spec.tier.name }}"
        changed: "{{ len ._normalizeChanges }}"
status:
  fields:
    - path: phase
      value: "{{ .spec.channel }}"
`)
	h := startOperator(t, plan)
	create(t, widget(h.ns, "messy", map[string]any{"image": "nginx:1.27", "channel": " Beta "}))
	cr := converged(t, h.ns, "messy")

	var cm corev1.ConfigMap
	mustGet(t, h.ns, "messy-normalized", &cm)
	want := map[string]string{"channel": "beta", "replicas": "1", "image": "registry.local/nginx:1.27", "tier": "BETA", "changed": "4"}
	for k, v := range want {
		if cm.Data[k] != v {
			t.Errorf("data[%s] = %q, want %q (all: %v)", k, cm.Data[k], v, cm.Data)
		}
	}
	if phase, _, _ := unstructured.NestedString(cr.Object, "status", "phase"); phase != "beta" {
		t.Errorf("status.phase %q, want the normalized beta", phase)
	}
	// Nothing is written back: the stored spec is what the client wrote.
	if ch, _, _ := unstructured.NestedString(cr.Object, "spec", "channel"); ch != " Beta " {
		t.Errorf("spec.channel was rewritten in the cluster: %q", ch)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(cr.Object, "spec", "replicas"); found {
		t.Error("spec.replicas was written back to the cluster")
	}
}
