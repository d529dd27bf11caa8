package main

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/conformance"
	"github.com/orkspace/orkestra-cel/operator"
)

// render -o manifests is what kubectl apply takes: every object it prints
// applies to a real API server with server-side apply.
func TestRenderManifestsApply(t *testing.T) {
	out, errOut, code := run(t, "", "render", "-f", website, "../../examples/website/website-v1.yaml", "-o", "manifests")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	objs, err := readObjects(nil, strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind())
	}
	if strings.Join(kinds, ",") != "ConfigMap,Deployment,Service,Service" {
		t.Fatalf("kinds %v (apply order: what a workload mounts first)", kinds)
	}
	ctx := t.Context()
	env, err := conformance.StartEnvironment(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(env.Config, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("kubectl"), client.ForceOwnership); err != nil {
			t.Fatalf("applying %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	var svc corev1.Service
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: objs[2].GetName()}, &svc); err != nil || len(svc.Spec.Ports) == 0 {
		t.Fatalf("service %+v: %v", svc.Spec, err)
	}
}

func TestRenderAndConvertJSON(t *testing.T) {
	out, _, code := run(t, "", "render", "-f", website, "../../examples/website/website-v1.yaml", "-o", "json")
	var rep struct {
		Entry       string
		OnReconcile []struct{ Kind string } `json:"onReconcile"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || rep.Entry == "" || len(rep.OnReconcile) == 0 {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
	out, _, code = run(t, "", "convert", "-f", website, "--to", "v1", "-o", "json", "../../examples/website/website-v1alpha1.yaml")
	var obj unstructured.Unstructured
	if err := json.Unmarshal([]byte(out), &obj.Object); err != nil || code != 0 || obj.GetAPIVersion() != "demo.orkestra.io/v1" {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
	if _, errOut, code := run(t, "", "render", "-f", website, "-o", "table"); code != 1 || !strings.Contains(errOut, `-o "table": use one of report, manifests, json`) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
