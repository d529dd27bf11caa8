package operator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/operator/render"
)

// readExample reads an example custom resource into namespace ns.
func readExample(t testing.TB, ns string, path ...string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", "examples"}, path...)...))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetNamespace(ns)
	return u
}

// waitPhase waits for status.phase of the custom resource.
func waitPhase(t testing.TB, u *unstructured.Unstructured, phase string) *unstructured.Unstructured {
	t.Helper()
	var live *unstructured.Unstructured
	eventually(t, u.GetName()+" to reach phase "+phase, func() error {
		live = &unstructured.Unstructured{}
		live.SetGroupVersionKind(u.GroupVersionKind())
		if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}, live); err != nil {
			return err
		}
		if p, _, _ := unstructured.NestedString(live.Object, "status", "phase"); p != phase {
			return fmt.Errorf("phase %q", p)
		}
		return nil
	})
	return live
}

// webApp is what both example katalogs make of one custom resource: a
// Deployment and a Service in front of it.
type webApp struct {
	deployment, service string
	image               string
	replicas            int32
	port                int32
	labels              map[string]string
}

func checkWebApp(t *testing.T, ns string, w webApp) {
	t.Helper()
	var d appsv1.Deployment
	var s corev1.Service
	eventually(t, "the deployment and service of "+w.deployment, func() error {
		if err := get(ns, w.deployment, &d); err != nil {
			return err
		}
		return get(ns, w.service, &s)
	})
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image != w.image || *d.Spec.Replicas != w.replicas || c.Ports[0].ContainerPort != w.port {
		t.Errorf("%s: image %s replicas %d port %d, want %s %d %d", w.deployment, c.Image, *d.Spec.Replicas, c.Ports[0].ContainerPort, w.image, w.replicas, w.port)
	}
	for k, v := range w.labels {
		if d.Labels[k] != v || d.Spec.Template.Labels[k] != v {
			t.Errorf("%s: label %s=%q on the object, %q on the pods, want %q", w.deployment, k, d.Labels[k], d.Spec.Template.Labels[k], v)
		}
	}
	if !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) || s.Spec.Ports[0].TargetPort.IntValue() != int(w.port) {
		t.Errorf("%s: selector %v port %v does not front %s", w.service, s.Spec.Selector, s.Spec.Ports, w.deployment)
	}
	if s.Spec.Selector[render.LabelChild] != w.deployment {
		t.Errorf("%s: selector %v does not name the deployment", w.service, s.Spec.Selector)
	}
}

// TestExampleWebsiteCEL runs examples/website (CEL, two versions): the
// storage-version entry reconciles objects created at either version, the
// other entry only counts them.
func TestExampleWebsiteCEL(t *testing.T) {
	h := startOperator(t, loadPlan(t, filepath.Join("..", "examples", "website", "katalog.yaml")))
	shop := readExample(t, h.ns, "website", "website-v1.yaml")
	hello := readExample(t, h.ns, "website", "website-v1alpha1.yaml")
	create(t, shop)
	create(t, hello)
	live := waitPhase(t, shop, "Running")
	if ep, _, _ := unstructured.NestedString(live.Object, "status", "endpoint"); ep != "shop."+h.ns+".svc.cluster.local" {
		t.Errorf("endpoint %q", ep)
	}
	waitPhase(t, hello, "Running")
	checkWebApp(t, h.ns, webApp{deployment: "shop", service: "shop-svc", image: "nginx:1.27", replicas: 3, port: 8080, labels: map[string]string{"app": "shop"}})
	checkWebApp(t, h.ns, webApp{deployment: "hello", service: "hello-svc", image: "nginx:1.27", replicas: 2, port: 8080, labels: map[string]string{"app": "hello"}})
	// tier enterprise and pro: a load balancer each; seo only for shop.
	for _, name := range []string{"shop-lb", "hello-lb"} {
		var s corev1.Service
		mustGet(t, h.ns, name, &s)
		if s.Spec.Type != corev1.ServiceTypeLoadBalancer || s.Spec.Ports[0].Port != 443 {
			t.Errorf("%s: %v %v", name, s.Spec.Type, s.Spec.Ports)
		}
	}
	var seo corev1.ConfigMap
	mustGet(t, h.ns, "shop-seo", &seo)
	if seo.Data["keywords"] != "shoes,boots" {
		t.Errorf("seo data %v", seo.Data)
	}
	if err := absent(h.ns, "hello-seo", &corev1.ConfigMap{}); err != nil {
		t.Error(err)
	}
	v1, _ := h.op.Entry("website-v1")
	alpha, _ := h.op.Entry("website-v1alpha1")
	if v1.Workers != 3 || alpha.Workers != 0 || !v1.Started || !alpha.Started {
		t.Errorf("entries: v1 %+v, v1alpha1 %+v", v1, alpha)
	}
	eventually(t, "both entries to count both resources", func() error {
		v1, _ := h.op.Entry("website-v1")
		alpha, _ := h.op.Entry("website-v1alpha1")
		if v1.ResourceCount != 2 || alpha.ResourceCount != 2 {
			return fmt.Errorf("v1 %d, v1alpha1 %d", v1.ResourceCount, alpha.ResourceCount)
		}
		return nil
	})
	if _, ok := h.op.entries["website-v1alpha1"]; !ok || h.op.entries["website-v1alpha1"].queue != nil {
		t.Errorf("the v1alpha1 entry has a work queue: it must only watch")
	}
}

// TestExampleLegacyWebsite runs examples/legacy-website (text/template,
// structured conditions, once secret): the same kind of objects as the CEL
// example.
func TestExampleLegacyWebsite(t *testing.T) {
	h := startOperator(t, loadPlan(t, filepath.Join("..", "examples", "legacy-website", "katalog.yaml")))
	blog := readExample(t, h.ns, "legacy-website", "webapp.yaml")
	create(t, blog)
	live := waitPhase(t, blog, "Running")
	if ep, _, _ := unstructured.NestedString(live.Object, "status", "endpoint"); ep != "blog."+h.ns+".svc.cluster.local" {
		t.Errorf("endpoint %q", ep)
	}
	checkWebApp(t, h.ns, webApp{deployment: "blog", service: "blog-svc", image: "ghost:5", replicas: 2, port: 2368, labels: map[string]string{"app": "blog", "env": "staging"}})
	var mon, banner corev1.ConfigMap
	mustGet(t, h.ns, "blog-monitoring", &mon)
	mustGet(t, h.ns, "blog-banner", &banner)
	if mon.Data["TARGET"] != "blog-svc:2368" || banner.Data["message"] != "BLOG runs ghost:5" {
		t.Errorf("config maps: %v %v", mon.Data, banner.Data)
	}
	var key corev1.Secret
	mustGet(t, h.ns, "blog-api-key", &key)
	if len(key.Data["key"]) != 32 {
		t.Errorf("api key %q", key.Data["key"])
	}

	// monitoring off: the reconcile: true config map under its condition goes.
	eventually(t, "turning monitoring off", func() error {
		u := blog.DeepCopy()
		if err := get(h.ns, "blog", u); err != nil {
			return err
		}
		_ = unstructured.SetNestedField(u.Object, false, "spec", "monitoring")
		return k8s.Update(context.Background(), u)
	})
	eventually(t, "blog-monitoring to be deleted", func() error { return absent(h.ns, "blog-monitoring", &corev1.ConfigMap{}) })
	st, _ := h.op.Entry("webapp")
	if st.Workers != 2 || st.ResourceCount != 1 {
		t.Errorf("Entry(webapp) = %+v", st)
	}
}

// TestLeaderElection: of two operators sharing a lease only the leader
// reconciles (the other's informers run: it counts resources); when the
// leader stops, the other takes over.
func TestLeaderElection(t *testing.T) {
	plan := widgetPlan(t, `
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-c"
      data: {a: b}
`)
	a := startOperator(t, plan, func(o *harnessOptions) { o.leaderElection, o.leaseID = true, "orkestra-test" })
	eventually(t, "a to lead", func() error {
		if st, _ := a.op.Entry("widget"); !st.Started {
			return fmt.Errorf("a not started")
		}
		return nil
	})
	b := startOperator(t, plan, func(o *harnessOptions) { o.ns, o.leaderElection, o.leaseID = a.ns, true, "orkestra-test" })
	create(t, widget(a.ns, "one", map[string]any{}))
	converged(t, a.ns, "one")
	eventually(t, "b to count the resource", func() error {
		if st, _ := b.op.Entry("widget"); st.ResourceCount != 1 {
			return fmt.Errorf("b counts %d", st.ResourceCount)
		}
		return nil
	})
	if st, _ := b.op.Entry("widget"); st.Started || !st.Healthy || st.Workers != 2 {
		t.Errorf("the follower reports %+v, want not started, healthy, 2 workers", st)
	}
	if n := metricValue(t, b, MetricReconcileTotal, map[string]string{"crd": "widget"}); n != 0 {
		t.Errorf("the follower reconciled %v times", n)
	}
	a.stop() // releases the lease
	eventually(t, "b to lead", func() error {
		if st, _ := b.op.Entry("widget"); !st.Started {
			return fmt.Errorf("b not started")
		}
		return nil
	})
	create(t, widget(a.ns, "two", map[string]any{}))
	converged(t, a.ns, "two")
	if n := metricValue(t, b, MetricReconcileTotal, map[string]string{"crd": "widget", "result": ResultSuccess}); n < 1 {
		t.Errorf("the new leader did not reconcile")
	}
}
