package gotmpl

import (
	"reflect"
	"regexp"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// compileExample loads testdata/legacy-website (a copy of
// shared/examples/legacy-website) and compiles it with this backend.
func compileExample(t *testing.T) *engine.Plan {
	t.Helper()
	k, diags := katalog.Load("testdata/legacy-website/katalog.yaml")
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	plan, diags := engine.Compile(k, engine.Backends{CEL: kubeCEL{}, Legacy: New(kubeCEL{})}, engine.CompileOptions{})
	if diags.HasErrors() {
		t.Fatalf("compile: %v", diags)
	}
	return plan
}

func resourceOf(t *testing.T, e *engine.Entry, hook, kind string) *engine.Resource {
	t.Helper()
	for _, r := range e.Hooks[hook] {
		if r.Source.Kind == kind {
			return r
		}
	}
	t.Fatalf("no %s in %s", kind, hook)
	return nil
}

func evalNode(t *testing.T, n *engine.Node, obj map[string]any) any {
	t.Helper()
	v, _, err := n.Eval(engine.NewScope(obj))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func evalCond(t *testing.T, c engine.Condition, obj map[string]any) bool {
	t.Helper()
	ok, err := c.Eval(engine.NewScope(obj))
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestLegacyWebsiteExample renders every template and condition of the
// example katalog against its sample WebApp. Expected values are derived by
// hand from webapp.yaml (name blog, namespace default, image ghost:5,
// replicas 2, port 2368, serviceType ClusterIP, monitoring true,
// environment staging).
func TestLegacyWebsiteExample(t *testing.T) {
	plan := compileExample(t)
	e := plan.Entry("webapp")
	obj := readObject(t, "testdata/legacy-website/webapp.yaml")

	dep := resourceOf(t, e, katalog.OnCreate, "deployments")
	want := map[string]any{
		"name":     "blog",
		"image":    "ghost:5",
		"replicas": int64(2),    // typed integer field: "2" → 2
		"port":     int64(2368), // "2368" → 2368
		"labels":   map[string]any{"app": "blog", "env": "staging"},
	}
	if got := evalNode(t, dep.Fields, obj); !reflect.DeepEqual(got, want) {
		t.Errorf("deployment = %#v\nwant %#v", got, want)
	}
	if dep.When != nil {
		t.Errorf("the deployment has no condition")
	}

	svc := resourceOf(t, e, katalog.OnCreate, "services")
	want = map[string]any{"name": "blog-svc", "type": "ClusterIP", "port": int64(80), "targetPort": int64(2368)}
	if got := evalNode(t, svc.Fields, obj); !reflect.DeepEqual(got, want) {
		t.Errorf("service = %#v\nwant %#v", got, want)
	}

	mon := resourceOf(t, e, katalog.OnCreate, "configMaps")
	want = map[string]any{"name": "blog-monitoring", "data": map[string]any{"SCRAPE_INTERVAL": "15s", "TARGET": "blog-svc:2368"}}
	if got := evalNode(t, mon.Fields, obj); !reflect.DeepEqual(got, want) {
		t.Errorf("monitoring configmap = %#v\nwant %#v", got, want)
	}
	if !evalCond(t, mon.When, obj) {
		t.Errorf("spec.monitoring is true: %q must hold", mon.When.Source())
	}
	if got, want := mon.When.Source(), `spec.monitoring equals "true"`; got != want {
		t.Errorf("source = %q, want %q", got, want)
	}
	if got, want := mon.When.(*Structured).CEL(), `legacy.str(self, 'spec.monitoring') == 'true'`; got != want {
		t.Errorf("CEL = %q, want %q", got, want)
	}

	sec := resourceOf(t, e, katalog.OnCreate, "secrets")
	got := evalNode(t, sec.Fields, obj).(map[string]any)
	key, _ := got["data"].(map[string]any)["key"].(string)
	if got["name"] != "blog-api-key" || !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(key) {
		t.Errorf("secret = %#v; want name blog-api-key and key of 32 hex characters (randomHex 16)", got)
	}
	again := evalNode(t, sec.Fields, obj).(map[string]any)["data"].(map[string]any)["key"]
	if again == key {
		t.Errorf("randomHex gave the same value twice")
	}

	banner := resourceOf(t, e, katalog.OnReconcile, "configMaps")
	want = map[string]any{"name": "blog-banner", "data": map[string]any{"message": "BLOG runs ghost:5"}}
	if got := evalNode(t, banner.Fields, obj); !reflect.DeepEqual(got, want) {
		t.Errorf("banner = %#v\nwant %#v", got, want)
	}
	if !evalCond(t, banner.When, obj) {
		t.Errorf("staging is in staging,production")
	}

	status := map[string]any{}
	for _, f := range e.Status {
		status[f.Path[0]] = evalNode(t, f.Value, obj)
	}
	if want := map[string]any{"phase": "Running", "endpoint": "blog.default.svc.cluster.local"}; !reflect.DeepEqual(status, want) {
		t.Errorf("status = %#v, want %#v", status, want)
	}
}

// TestLegacyWebsiteVariant: the same katalog against a WebApp without
// environment and replicas, monitoring off.
func TestLegacyWebsiteVariant(t *testing.T) {
	plan := compileExample(t)
	e := plan.Entry("webapp")
	obj := decodeObject(t, `
apiVersion: demo.orkestra.io/v1alpha1
kind: WebApp
metadata: {name: shop, namespace: prod}
spec: {image: "nginx:1.27", port: 8080, serviceType: NodePort, monitoring: false}
`)
	dep := resourceOf(t, e, katalog.OnCreate, "deployments")
	want := map[string]any{
		"name":  "shop",
		"image": "nginx:1.27",
		// replicas: "{{ .spec.replicas }}" is a plain reference to an absent
		// field: left unset (the Deployment default, 1, applies).
		"port":   int64(8080),
		"labels": map[string]any{"app": "shop", "env": "dev"}, // default .spec.environment "dev"
	}
	if got := evalNode(t, dep.Fields, obj); !reflect.DeepEqual(got, want) {
		t.Errorf("deployment = %#v\nwant %#v", got, want)
	}
	svc := resourceOf(t, e, katalog.OnCreate, "services")
	if got := evalNode(t, svc.Fields, obj).(map[string]any)["type"]; got != "NodePort" {
		t.Errorf("service type = %v", got)
	}
	if mon := resourceOf(t, e, katalog.OnCreate, "configMaps"); evalCond(t, mon.When, obj) {
		t.Errorf("monitoring false renders \"false\", not \"true\"")
	}
	if banner := resourceOf(t, e, katalog.OnReconcile, "configMaps"); evalCond(t, banner.When, obj) {
		t.Errorf("a missing environment is \"\", not in staging,production")
	}
	for _, f := range e.Status {
		if f.Path[0] == "endpoint" {
			if got := evalNode(t, f.Value, obj); got != "shop.prod.svc.cluster.local" {
				t.Errorf("endpoint = %v", got)
			}
		}
	}
}
