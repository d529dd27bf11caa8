package operator

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/engine"
)

var websiteV1 = schema.GroupVersionKind{Group: "demo.orkestra.io", Version: "v1", Kind: "Website"}

// applyShop writes examples/website's shop with server-side apply, carrying
// the last-applied annotation as kubectl apply writes it: on the server it
// has managedFields and the annotation.
func applyShop(t *testing.T, ns string) *unstructured.Unstructured {
	t.Helper()
	shop := readExample(t, ns, "website", "website-v1.yaml")
	shop.SetAnnotations(map[string]string{engine.AnnotationLastApplied: `{"apiVersion":"demo.orkestra.io/v1","kind":"Website"}`, "team": "storefront"})
	if err := k8s.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(shop), client.FieldOwner("kubectl"), client.ForceOwnership); err != nil {
		t.Fatalf("applying shop: %v", err)
	}
	return shop
}

// cachedObjects lists from the manager's cache what the operator holds of
// the website katalog in ns: custom resources at v1, Deployments, Services
// and ConfigMaps.
func cachedObjects(t *testing.T, h *harness) []client.Object {
	t.Helper()
	ctx := context.Background()
	crs := &unstructured.UnstructuredList{}
	crs.SetGroupVersionKind(websiteV1.GroupVersion().WithKind("WebsiteList"))
	deps, svcs, cms := &appsv1.DeploymentList{}, &corev1.ServiceList{}, &corev1.ConfigMapList{}
	var out []client.Object
	for _, l := range []client.ObjectList{crs, deps, svcs, cms} {
		if err := h.mgr.GetCache().List(ctx, l, client.InNamespace(h.ns)); err != nil {
			t.Fatalf("listing %T from the cache: %v", l, err)
		}
	}
	for i := range crs.Items {
		out = append(out, &crs.Items[i])
	}
	for i := range deps.Items {
		out = append(out, &deps.Items[i])
	}
	for i := range svcs.Items {
		out = append(out, &svcs.Items[i])
	}
	for i := range cms.Items {
		out = append(out, &cms.Items[i])
	}
	return out
}

// TestCachesHoldNoManagedFields: what enters the operator's caches carries
// no managedFields and no last-applied annotation, though the API server's
// objects do; drift correction keeps on the server what the caches dropped.
func TestCachesHoldNoManagedFields(t *testing.T) {
	h := startOperator(t, loadPlan(t, filepath.Join("..", "examples", "website", "katalog.yaml")))
	ctx := context.Background()
	shop := applyShop(t, h.ns)
	waitPhase(t, shop, "Running")

	// A child kubectl applied a change to: the image drifted, and the
	// child carries kubectl's annotation and its managedFields entry.
	var dep appsv1.Deployment
	mustGet(t, h.ns, "shop", &dep)
	dep.Annotations = map[string]string{engine.AnnotationLastApplied: `{"kind":"Deployment"}`}
	dep.Spec.Template.Spec.Containers[0].Image = "nginx:drifted"
	if err := k8s.Update(ctx, &dep, client.FieldOwner("kubectl")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the drift to be corrected", func() error {
		mustGet(t, h.ns, "shop", &dep)
		if img := dep.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.27" {
			return fmt.Errorf("image %s", img)
		}
		return nil
	})
	if dep.Annotations[engine.AnnotationLastApplied] == "" {
		t.Errorf("correcting the drift removed the last-applied annotation from the server's Deployment: %v", dep.Annotations)
	}
	managers := map[string]bool{}
	for _, m := range dep.ManagedFields {
		managers[m.Manager] = true
	}
	if !managers["kubectl"] || len(managers) < 2 {
		t.Errorf("the server's Deployment lost managedFields entries in the correction: managers %v", managers)
	}

	var objs []client.Object
	eventually(t, "the caches to hold shop and its four children", func() error {
		objs = cachedObjects(t, h)
		if len(objs) != 5 {
			return fmt.Errorf("%d objects cached", len(objs))
		}
		return nil
	})
	for _, o := range objs {
		what := fmt.Sprintf("cached %T %s", o, o.GetName())
		if o.GetManagedFields() != nil {
			t.Errorf("%s carries managedFields: %v", what, o.GetManagedFields())
		}
		if _, ok := o.GetAnnotations()[engine.AnnotationLastApplied]; ok {
			t.Errorf("%s carries the last-applied annotation", what)
		}
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(websiteV1)
	mustGet(t, h.ns, "shop", live)
	if len(live.GetManagedFields()) == 0 || live.GetAnnotations()[engine.AnnotationLastApplied] == "" || live.GetAnnotations()["team"] != "storefront" {
		t.Errorf("the server's shop lacks what the test wrote (managedFields %d, annotations %v)", len(live.GetManagedFields()), live.GetAnnotations())
	}
}

// TestCountingEntriesHoldNoObjects: an entry that only counts (another
// version of a CRD) counts with the informer of the entry that reconciles
// the CRD, watching nothing itself; without such an entry it watches
// metadata only.
func TestCountingEntriesHoldNoObjects(t *testing.T) {
	file := filepath.Join("..", "examples", "website", "katalog.yaml")
	path := func(ns, version string) string {
		return "/apis/demo.orkestra.io/" + version + "/namespaces/" + ns + "/websites"
	}
	counts := func(h *harness, want int) {
		t.Helper()
		eventually(t, "the v1alpha1 entry to count the websites", func() error {
			if st, _ := h.op.Entry("website-v1alpha1"); st.ResourceCount != want || !st.Started {
				return fmt.Errorf("%+v", st)
			}
			return nil
		})
	}

	h := startOperator(t, loadPlan(t, file))
	create(t, readExample(t, h.ns, "website", "website-v1alpha1.yaml"))
	waitPhase(t, applyShop(t, h.ns), "Running")
	counts(h, 2)
	if a := apiCalls.acceptOf(path(h.ns, "v1alpha1")); a != "" {
		t.Errorf("the v1alpha1 entry watches (Accept %q); it should count with v1's informer", a)
	}
	if a := apiCalls.acceptOf(path(h.ns, "v1")); a == "" || strings.Contains(a, "as=PartialObjectMetadata") {
		t.Errorf("the v1 entry watched with Accept %q; want whole objects", a)
	}

	// The reconciling entry disabled: v1alpha1 counts alone, from metadata.
	plan := loadPlan(t, file)
	plan.Entry("website-v1").Enabled = false
	alone := startOperator(t, plan)
	create(t, readExample(t, alone.ns, "website", "website-v1alpha1.yaml"))
	counts(alone, 1)
	if a := apiCalls.acceptOf(path(alone.ns, "v1alpha1")); !strings.Contains(a, "as=PartialObjectMetadata") {
		t.Errorf("the v1alpha1 entry watched with Accept %q; want metadata only", a)
	}
}

// TestWholeObjectsKeepManagedFields: ManagerOptions.WholeObjects (the
// benchmarks' baseline) caches objects as the API server sends them.
func TestWholeObjectsKeepManagedFields(t *testing.T) {
	h := startOperator(t, loadPlan(t, filepath.Join("..", "examples", "website", "katalog.yaml")), func(o *harnessOptions) { o.wholeObjects = true })
	waitPhase(t, applyShop(t, h.ns), "Running")
	eventually(t, "the cached shop to carry what the server holds", func() error {
		cr := &unstructured.Unstructured{}
		cr.SetGroupVersionKind(websiteV1)
		if err := h.mgr.GetCache().Get(context.Background(), types.NamespacedName{Namespace: h.ns, Name: "shop"}, cr); err != nil {
			return err
		}
		if len(cr.GetManagedFields()) == 0 || cr.GetAnnotations()[engine.AnnotationLastApplied] == "" {
			return fmt.Errorf("managedFields %d, annotations %v", len(cr.GetManagedFields()), cr.GetAnnotations())
		}
		return nil
	})
}

// TestKatalogReadingAnnotationsKeepsThem: an expression that reads
// annotations sees the last-applied one; one naming managedFields sees
// them.
func TestKatalogReadingAnnotationsKeepsThem(t *testing.T) {
	plan := widgetPlan(t, `
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-meta"
      data:
        applied: "${self.metadata.annotations[?'kubectl.kubernetes.io/last-applied-configuration'].orValue('none')}"
        managers: "${string(self.metadata.?managedFields.orValue([]).size())}"
`)
	h := startOperator(t, plan)
	w := widget(h.ns, "w", map[string]any{"image": "x"})
	w.SetAnnotations(map[string]string{engine.AnnotationLastApplied: `{"kind":"Widget"}`})
	create(t, w)
	eventually(t, "the configmap to show what the custom resource carries", func() error {
		var cm corev1.ConfigMap
		if err := get(h.ns, "w-meta", &cm); err != nil {
			return err
		}
		if cm.Data["applied"] != `{"kind":"Widget"}` || cm.Data["managers"] == "0" {
			return fmt.Errorf("data %v", cm.Data)
		}
		return nil
	})
}

// TestReconcileLeavesTheCacheAlone: reconciles read custom resources and
// children from the cache without copying them, and write copies: the
// cached objects never change.
func TestReconcileLeavesTheCacheAlone(t *testing.T) {
	h := startOperator(t, loadPlan(t, filepath.Join("..", "examples", "website", "katalog.yaml")))
	ctx := context.Background()
	shop := applyShop(t, h.ns)
	waitPhase(t, shop, "Running")
	key := types.NamespacedName{Namespace: h.ns, Name: "shop"}
	// A spec change and a drifted child: the next reconcile writes the
	// status and corrects the child.
	var dep appsv1.Deployment
	mustGet(t, h.ns, "shop", &dep)
	dep.Spec.Replicas = new(int32)
	if err := k8s.Update(ctx, &dep); err != nil {
		t.Fatal(err)
	}
	updateWebsite(t, key, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(4), "spec", "replicas")
	})
	cr := &unstructured.Unstructured{}
	cr.SetGroupVersionKind(websiteV1)
	eventually(t, "the cache to see the new generation", func() error {
		if err := h.mgr.GetCache().Get(ctx, key, cr, client.UnsafeDisableDeepCopy); err != nil {
			return err
		}
		if cr.GetGeneration() < 2 {
			return fmt.Errorf("generation %d", cr.GetGeneration())
		}
		return nil
	})
	child := &appsv1.Deployment{}
	if err := h.mgr.GetCache().Get(ctx, key, child, client.UnsafeDisableDeepCopy); err != nil {
		t.Fatal(err)
	}
	before, _ := json.Marshal(cr.Object)
	childBefore, _ := json.Marshal(child)
	h.reconcileNow("website-v1", "shop")
	h.idle("website-v1")
	after, _ := json.Marshal(cr.Object)
	childAfter, _ := json.Marshal(child)
	if string(before) != string(after) {
		t.Errorf("a reconcile changed the cached custom resource:\nbefore %s\nafter  %s", before, after)
	}
	if string(childBefore) != string(childAfter) {
		t.Errorf("a reconcile changed the cached Deployment:\nbefore %s\nafter  %s", childBefore, childAfter)
	}
	mustGet(t, h.ns, "shop", &dep)
	if *dep.Spec.Replicas != 4 {
		t.Errorf("replicas %d, want 4", *dep.Spec.Replicas)
	}
}

// updateWebsite applies f to the live website and writes it, retrying
// conflicts.
func updateWebsite(t *testing.T, key types.NamespacedName, f func(*unstructured.Unstructured)) {
	t.Helper()
	eventually(t, "updating "+key.Name, func() error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(websiteV1)
		if err := k8s.Get(context.Background(), key, u); err != nil {
			return err
		}
		f(u)
		return k8s.Update(context.Background(), u)
	})
}
