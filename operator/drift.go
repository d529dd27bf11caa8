package operator

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/operator/render"
)

// Drift correction compares, per kind, only the fields the katalog manages
// (the simplified fields a declaration sets) between the desired object and
// the live one, and copies the desired value onto the live object where they
// differ. Sub-objects written in full (probes, resources, volumes, env, …)
// are compared as a subset: every field the katalog sets must have the same
// value live, while fields the API server defaults (a probe's
// timeoutSeconds, a volume's defaultMode) are not drift. Labels and
// annotations are compared as a subset too: others may add their own.

// drift is the outcome of one comparison.
type drift struct {
	// fields that differ (simplified field names), sorted.
	fields []string
	// recreate is true when a differing field cannot be updated in place
	// (a Pod's spec, a Service's headless-ness, a Secret's type).
	recreate bool
}

func (d *drift) add(field string) {
	for _, f := range d.fields {
		if f == field {
			return
		}
	}
	d.fields = append(d.fields, field)
}

func (d *drift) none() bool { return len(d.fields) == 0 }

// managed is the set of simplified fields a declaration sets.
type managed map[string]any

func (m managed) has(key string) bool {
	_, ok := m[key]
	return ok
}

// diffChild compares want (the rendered child) with live, correcting live in
// place. live is a typed object of the child's kind (unstructured for custom).
func diffChild(c *render.Child, live client.Object) (drift, error) {
	var d drift
	m := managed(c.Fields)
	if c.Kind == "custom" {
		diffCustom(&d, c.Object, live.(*unstructured.Unstructured))
		sort.Strings(d.fields)
		return d, nil
	}
	want := c.Typed
	diffMeta(&d, want, live)
	switch w := want.(type) {
	case *appsv1.Deployment:
		g := live.(*appsv1.Deployment)
		if m.has("replicas") && !eqInt32(w.Spec.Replicas, g.Spec.Replicas) {
			g.Spec.Replicas = w.Spec.Replicas
			d.add("replicas")
		}
		diffTemplate(&d, m, &w.Spec.Template, &g.Spec.Template)
	case *appsv1.StatefulSet:
		g := live.(*appsv1.StatefulSet)
		if m.has("replicas") && !eqInt32(w.Spec.Replicas, g.Spec.Replicas) {
			g.Spec.Replicas = w.Spec.Replicas
			d.add("replicas")
		}
		diffTemplate(&d, m, &w.Spec.Template, &g.Spec.Template)
	case *batchv1.CronJob:
		g := live.(*batchv1.CronJob)
		if m.has("schedule") && w.Spec.Schedule != g.Spec.Schedule {
			g.Spec.Schedule = w.Spec.Schedule
			d.add("schedule")
		}
		if m.has("suspend") && !eqBool(w.Spec.Suspend, g.Spec.Suspend) {
			g.Spec.Suspend = w.Spec.Suspend
			d.add("suspend")
		}
		if m.has("concurrencyPolicy") && w.Spec.ConcurrencyPolicy != g.Spec.ConcurrencyPolicy {
			g.Spec.ConcurrencyPolicy = w.Spec.ConcurrencyPolicy
			d.add("concurrencyPolicy")
		}
		if m.has("backoffLimit") && !eqInt32(w.Spec.JobTemplate.Spec.BackoffLimit, g.Spec.JobTemplate.Spec.BackoffLimit) {
			g.Spec.JobTemplate.Spec.BackoffLimit = w.Spec.JobTemplate.Spec.BackoffLimit
			d.add("backoffLimit")
		}
		if !subsetMap(w.Spec.JobTemplate.Labels, g.Spec.JobTemplate.Labels) {
			g.Spec.JobTemplate.Labels = mergeMap(g.Spec.JobTemplate.Labels, w.Spec.JobTemplate.Labels)
			d.add("labels")
		}
		diffTemplate(&d, m, &w.Spec.JobTemplate.Spec.Template, &g.Spec.JobTemplate.Spec.Template)
	case *batchv1.Job:
		// Jobs are create-only: never compared.
		d = drift{}
	case *corev1.Pod:
		g := live.(*corev1.Pod)
		var pd drift
		diffPodSpec(&pd, m, &w.Spec, &g.Spec, true)
		for _, f := range pd.fields {
			d.add(f)
		}
		if !pd.none() {
			d.recreate = true
		}
	case *corev1.Service:
		diffService(&d, m, w, live.(*corev1.Service))
	case *corev1.ConfigMap:
		g := live.(*corev1.ConfigMap)
		if m.has("data") && !eqStringMap(w.Data, g.Data) {
			g.Data = w.Data
			d.add("data")
		}
	case *corev1.Secret:
		g := live.(*corev1.Secret)
		if m.has("type") && w.Type != g.Type {
			d.add("type")
			d.recreate = true
		}
		if m.has("data") && !eqBytesMap(w.Data, g.Data) {
			g.Data = w.Data
			d.add("data")
		}
	case *corev1.ServiceAccount:
		g := live.(*corev1.ServiceAccount)
		if m.has("automountServiceAccountToken") && !eqBool(w.AutomountServiceAccountToken, g.AutomountServiceAccountToken) {
			g.AutomountServiceAccountToken = w.AutomountServiceAccountToken
			d.add("automountServiceAccountToken")
		}
		if m.has("imagePullSecrets") && !subset(w.ImagePullSecrets, g.ImagePullSecrets) {
			g.ImagePullSecrets = w.ImagePullSecrets
			d.add("imagePullSecrets")
		}
	case *networkingv1.Ingress:
		g := live.(*networkingv1.Ingress)
		if !subset(w.Spec, g.Spec) {
			g.Spec = w.Spec
			d.add("spec")
		}
	case *corev1.PersistentVolumeClaim:
		// Only the storage request can change on a bound claim (expansion).
		g := live.(*corev1.PersistentVolumeClaim)
		if m.has("storage") {
			wq, gq := w.Spec.Resources.Requests[corev1.ResourceStorage], g.Spec.Resources.Requests[corev1.ResourceStorage]
			if wq.Cmp(gq) != 0 {
				if g.Spec.Resources.Requests == nil {
					g.Spec.Resources.Requests = corev1.ResourceList{}
				}
				g.Spec.Resources.Requests[corev1.ResourceStorage] = wq
				d.add("storage")
			}
		}
	default:
		return d, fmt.Errorf("no drift comparison for %T", want)
	}
	sort.Strings(d.fields)
	return d, nil
}

// diffMeta compares labels and annotations as subsets.
func diffMeta(d *drift, want, live client.Object) {
	if !subsetMap(want.GetLabels(), live.GetLabels()) {
		live.SetLabels(mergeMap(live.GetLabels(), want.GetLabels()))
		d.add("labels")
	}
	if !subsetMap(want.GetAnnotations(), live.GetAnnotations()) {
		live.SetAnnotations(mergeMap(live.GetAnnotations(), want.GetAnnotations()))
		d.add("annotations")
	}
}

func diffTemplate(d *drift, m managed, w, g *corev1.PodTemplateSpec) {
	if !subsetMap(w.Labels, g.Labels) {
		g.Labels = mergeMap(g.Labels, w.Labels)
		d.add("podLabels")
	}
	if !subsetMap(w.Annotations, g.Annotations) {
		g.Annotations = mergeMap(g.Annotations, w.Annotations)
		d.add("podAnnotations")
	}
	diffPodSpec(d, m, &w.Spec, &g.Spec, false)
}

// diffPodSpec compares the pod-level and container-level simplified fields.
// For a live Pod (pod=true) lists are compared by containment: admission
// adds volumes, mounts and tolerations to running pods.
func diffPodSpec(d *drift, m managed, w, g *corev1.PodSpec, pod bool) {
	list := subset
	if pod {
		list = contains
	}
	if m.has("serviceAccountName") && w.ServiceAccountName != g.ServiceAccountName {
		g.ServiceAccountName = w.ServiceAccountName
		d.add("serviceAccountName")
	}
	if m.has("nodeSelector") && !eqStringMap(w.NodeSelector, g.NodeSelector) {
		g.NodeSelector = w.NodeSelector
		d.add("nodeSelector")
	}
	if m.has("imagePullSecrets") && !subset(w.ImagePullSecrets, g.ImagePullSecrets) {
		g.ImagePullSecrets = w.ImagePullSecrets
		d.add("imagePullSecrets")
	}
	if m.has("tolerations") && !list(w.Tolerations, g.Tolerations) {
		g.Tolerations = w.Tolerations
		d.add("tolerations")
	}
	if m.has("volumes") && !list(w.Volumes, g.Volumes) {
		g.Volumes = w.Volumes
		d.add("volumes")
	}
	if m.has("podSecurityContext") && !subset(w.SecurityContext, g.SecurityContext) {
		g.SecurityContext = w.SecurityContext
		d.add("podSecurityContext")
	}
	if m.has("restartPolicy") && w.RestartPolicy != g.RestartPolicy {
		g.RestartPolicy = w.RestartPolicy
		d.add("restartPolicy")
	}
	wc := &w.Containers[0]
	var gc *corev1.Container
	for i := range g.Containers {
		if g.Containers[i].Name == wc.Name {
			gc = &g.Containers[i]
		}
	}
	if gc == nil {
		// The container was renamed or removed: ours replaces them.
		g.Containers = []corev1.Container{*wc}
		d.add("containerName")
		return
	}
	if m.has("image") && wc.Image != gc.Image {
		gc.Image = wc.Image
		d.add("image")
	}
	if m.has("imagePullPolicy") && wc.ImagePullPolicy != gc.ImagePullPolicy {
		gc.ImagePullPolicy = wc.ImagePullPolicy
		d.add("imagePullPolicy")
	}
	if m.has("command") && !eqStrings(wc.Command, gc.Command) {
		gc.Command = wc.Command
		d.add("command")
	}
	if m.has("args") && !eqStrings(wc.Args, gc.Args) {
		gc.Args = wc.Args
		d.add("args")
	}
	if (m.has("port") || m.has("protocol")) && !subset(wc.Ports, gc.Ports) {
		gc.Ports = wc.Ports
		d.add("port")
	}
	if m.has("env") && !list(wc.Env, gc.Env) {
		gc.Env = wc.Env
		d.add("env")
	}
	if m.has("envFrom") && !list(wc.EnvFrom, gc.EnvFrom) {
		gc.EnvFrom = wc.EnvFrom
		d.add("envFrom")
	}
	if m.has("resources") && !subset(wc.Resources, gc.Resources) {
		gc.Resources = wc.Resources
		d.add("resources")
	}
	if m.has("livenessProbe") && !subset(wc.LivenessProbe, gc.LivenessProbe) {
		gc.LivenessProbe = wc.LivenessProbe
		d.add("livenessProbe")
	}
	if m.has("readinessProbe") && !subset(wc.ReadinessProbe, gc.ReadinessProbe) {
		gc.ReadinessProbe = wc.ReadinessProbe
		d.add("readinessProbe")
	}
	if m.has("startupProbe") && !subset(wc.StartupProbe, gc.StartupProbe) {
		gc.StartupProbe = wc.StartupProbe
		d.add("startupProbe")
	}
	if m.has("securityContext") && !subset(wc.SecurityContext, gc.SecurityContext) {
		gc.SecurityContext = wc.SecurityContext
		d.add("securityContext")
	}
	if m.has("volumeMounts") && !list(wc.VolumeMounts, gc.VolumeMounts) {
		gc.VolumeMounts = wc.VolumeMounts
		d.add("volumeMounts")
	}
}

func diffService(d *drift, m managed, w, g *corev1.Service) {
	if m.has("headless") && (w.Spec.ClusterIP == corev1.ClusterIPNone) != (g.Spec.ClusterIP == corev1.ClusterIPNone) {
		// clusterIP is immutable.
		d.add("headless")
		d.recreate = true
		return
	}
	if m.has("type") && w.Spec.Type != g.Spec.Type {
		g.Spec.Type = w.Spec.Type
		d.add("type")
	}
	if !eqStringMap(w.Spec.Selector, g.Spec.Selector) {
		g.Spec.Selector = w.Spec.Selector
		d.add("selector")
	}
	if !subset(w.Spec.Ports, g.Spec.Ports) {
		ports := make([]corev1.ServicePort, len(w.Spec.Ports))
		copy(ports, w.Spec.Ports)
		needsNodePort := g.Spec.Type == corev1.ServiceTypeNodePort || g.Spec.Type == corev1.ServiceTypeLoadBalancer
		for i := range ports {
			if ports[i].NodePort == 0 && needsNodePort && i < len(g.Spec.Ports) {
				ports[i].NodePort = g.Spec.Ports[i].NodePort
			}
		}
		g.Spec.Ports = ports
		d.add("port")
	} else if g.Spec.Type != corev1.ServiceTypeNodePort && g.Spec.Type != corev1.ServiceTypeLoadBalancer {
		// A type change away from NodePort must drop the allocated ports.
		for i := range g.Spec.Ports {
			if g.Spec.Ports[i].NodePort != 0 && (i >= len(w.Spec.Ports) || w.Spec.Ports[i].NodePort == 0) {
				g.Spec.Ports[i].NodePort = 0
				d.add("port")
			}
		}
	}
}

// diffCustom compares every top-level field of a custom manifest (besides
// apiVersion, kind, metadata and status) as a subset, and the labels and
// annotations; differing fields are merged into the live object.
func diffCustom(d *drift, want, live *unstructured.Unstructured) {
	if !subsetMap(want.GetLabels(), live.GetLabels()) {
		live.SetLabels(mergeMap(live.GetLabels(), want.GetLabels()))
		d.add("labels")
	}
	if !subsetMap(want.GetAnnotations(), live.GetAnnotations()) {
		live.SetAnnotations(mergeMap(live.GetAnnotations(), want.GetAnnotations()))
		d.add("annotations")
	}
	for k, wv := range want.Object {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			continue
		}
		if !subsetPlain(wv, live.Object[k]) {
			live.Object[k] = mergePlain(live.Object[k], wv)
			d.add(k)
		}
	}
}

// mergePlain sets every field of want into got (maps merged recursively,
// lists and scalars replaced).
func mergePlain(got, want any) any {
	wm, ok := want.(map[string]any)
	if !ok {
		return want
	}
	gm, ok := got.(map[string]any)
	if !ok {
		return want
	}
	for k, v := range wm {
		gm[k] = mergePlain(gm[k], v)
	}
	return gm
}

// subset reports whether every field set in want has the same value in got,
// comparing their JSON forms (lists item by item, same length).
func subset(want, got any) bool {
	return subsetPlain(plain(want), plain(got))
}

// contains reports whether every item of the list want is a subset of some
// item of the list got.
func contains(want, got any) bool {
	wl, _ := plain(want).([]any)
	gl, _ := plain(got).([]any)
	for _, w := range wl {
		found := false
		for _, g := range gl {
			if subsetPlain(w, g) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func plain(v any) any {
	if rv := reflect.ValueOf(v); !rv.IsValid() || (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Slice || rv.Kind() == reflect.Map) && rv.IsNil() {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

func subsetPlain(want, got any) bool {
	if isEmpty(want) {
		// Nothing set is nothing to compare; but an explicitly empty list
		// or map must be empty live too.
		return want == nil || isEmpty(got)
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			if !subsetPlain(wv, g[k]) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !subsetPlain(w[i], g[i]) {
				return false
			}
		}
		return true
	}
	return numEq(want, got) || reflect.DeepEqual(want, got)
}

func numEq(a, b any) bool {
	fa, ok1 := toFloat(a)
	fb, ok2 := toFloat(b)
	return ok1 && ok2 && fa == fb
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func subsetMap(want, got map[string]string) bool {
	for k, v := range want {
		if gv, ok := got[k]; !ok || gv != v {
			return false
		}
	}
	return true
}

func mergeMap(got, want map[string]string) map[string]string {
	out := make(map[string]string, len(got)+len(want))
	for k, v := range got {
		out[k] = v
	}
	for k, v := range want {
		out[k] = v
	}
	return out
}

func eqStringMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func eqBytesMap(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		bv, ok := b[k]
		if !ok || string(bv) != string(v) {
			return false
		}
	}
	return true
}

func eqStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func eqInt32(a, b *int32) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func eqBool(a, b *bool) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}
