package webhook

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalogapi"
	"github.com/orkspace/orkestra-cel/readiness"
)

// ResourceReader reads an entry's custom resources, their children and
// events for the /katalog/{crd}/cr routes (the operator implements it from
// its caches). Under `orkestra serve` there is none.
type ResourceReader interface {
	CustomResources(ctx context.Context, entry string) ([]unstructured.Unstructured, error)
	// CustomResource returns nil when there is none of that name.
	CustomResource(ctx context.Context, entry, namespace, name string) (*unstructured.Unstructured, error)
	Children(ctx context.Context, entry string, cr *unstructured.Unstructured) ([]unstructured.Unstructured, error)
	Events(ctx context.Context, entry, namespace, name string) ([]corev1.Event, error)
}

const maxEvents = 100

// readTimeout bounds the reads one request makes.
const readTimeout = 5 * time.Second

// noResources answers the /cr routes when nothing reads the cluster.
func (k *katalogAPI) noResources(w http.ResponseWriter) bool {
	if k.resources != nil {
		return false
	}
	writeJSON(w, http.StatusServiceUnavailable, map[string]string{
		"error": "custom resources are served by the runtime that reconciles them (orkestra run, orkestra dev); orkestra serve reads no cluster",
	})
	return true
}

func (k *katalogAPI) crList(w http.ResponseWriter, r *http.Request, e *engine.Entry) {
	if k.noResources(w) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
	defer cancel()
	crs, err := k.resources.CustomResources(ctx, e.Name)
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
		return
	}
	field := r.URL.Query().Get("field")
	out := katalogapi.CRList{CRD: e.Name, GVK: e.GVK.String(), Items: make([]katalogapi.CRSummary, 0, len(crs))}
	for i := range crs {
		s := k.summarize(&crs[i])
		if field != "" {
			s.Value = fieldText(crs[i].Object, field)
		}
		out.Items = append(out.Items, s)
	}
	sort.Slice(out.Items, func(i, j int) bool {
		a, b := out.Items[i], out.Items[j]
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	out.Total = len(out.Items)
	writeJSON(w, http.StatusOK, out)
}

func (k *katalogAPI) summarize(cr *unstructured.Unstructured) katalogapi.CRSummary {
	phase, _, _ := unstructured.NestedString(cr.Object, "status", "phase")
	ready := readyCondition(cr)
	return katalogapi.CRSummary{
		Name:        cr.GetName(),
		Namespace:   cr.GetNamespace(),
		Phase:       phase,
		Ready:       ready.Status == metav1.ConditionTrue,
		ReadyReason: ready.Reason,
		Age:         duration.HumanDuration(k.now().Sub(cr.GetCreationTimestamp().Time)),
		Generation:  cr.GetGeneration(),
	}
}

// readyCondition returns the custom resource's Ready condition (zero when
// it has none).
func readyCondition(cr *unstructured.Unstructured) metav1.Condition {
	conds, _, _ := unstructured.NestedSlice(cr.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "Ready" {
			continue
		}
		s := func(k string) string { v, _ := m[k].(string); return v }
		return metav1.Condition{Type: "Ready", Status: metav1.ConditionStatus(s("status")), Reason: s("reason"), Message: s("message")}
	}
	return metav1.Condition{}
}

// fieldText returns the value at the dotted path, as text; "" when absent
// or not a scalar.
func fieldText(obj map[string]any, path string) string {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj, strings.Split(path, ".")...)
	if !ok || v == nil {
		return ""
	}
	switch v.(type) {
	case map[string]any, []any:
		return ""
	}
	return fmt.Sprint(v)
}

// crDetail serves …/cr/{namespace}/{name} and …/cr/{namespace}/{name}/events
// ({name} alone for a cluster-scoped entry).
func (k *katalogAPI) crDetail(w http.ResponseWriter, r *http.Request, e *engine.Entry) {
	if k.noResources(w) {
		return
	}
	path := strings.Trim(r.PathValue("path"), "/")
	path, events := strings.CutSuffix(path, "/events")
	parts := strings.Split(path, "/")
	var namespace, name string
	switch {
	case e.Namespaced && len(parts) == 2:
		namespace, name = parts[0], parts[1]
	case !e.Namespaced && len(parts) == 1:
		name = parts[0]
	default:
		form := "/katalog/" + e.Name + "/cr/{namespace}/{name}"
		if !e.Namespaced {
			form = "/katalog/" + e.Name + "/cr/{name}"
		}
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("%s is %s: ask for %s, or %s/events", e.GVR.Resource, scope(e), form, form)})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
	defer cancel()
	if events {
		k.crEvents(ctx, w, e, namespace, name)
		return
	}
	cr, err := k.resources.CustomResource(ctx, e.Name, namespace, name)
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
		return
	}
	if cr == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("CR %q not found", strings.Trim(namespace+"/"+name, "/"))})
		return
	}
	kids, err := k.resources.Children(ctx, e.Name, cr)
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, detail(e, cr, kids))
}

func scope(e *engine.Entry) string {
	if e.Namespaced {
		return "namespaced"
	}
	return "cluster-scoped"
}

func detail(e *engine.Entry, cr *unstructured.Unstructured, kids []unstructured.Unstructured) katalogapi.CRDetail {
	ready := readyCondition(cr)
	status, _, _ := unstructured.NestedMap(cr.Object, "status")
	out := katalogapi.CRDetail{
		Name:              cr.GetName(),
		Namespace:         cr.GetNamespace(),
		Generation:        cr.GetGeneration(),
		CreationTimestamp: cr.GetCreationTimestamp().UTC().Format(time.RFC3339),
		Labels:            cr.GetLabels(),
		Annotations:       map[string]string{},
		Ready:             ready.Status == metav1.ConditionTrue,
		ReadyReason:       ready.Reason,
		ReadyMessage:      ready.Message,
		Status:            status,
		Children:          map[string]any{},
		EventsEndpoint:    "/katalog/" + e.Name + "/cr/" + strings.Trim(cr.GetNamespace()+"/"+cr.GetName(), "/") + "/events",
	}
	for k, v := range cr.GetAnnotations() {
		// The client's and the runtime's own bookkeeping stay out, as upstream.
		if k != corev1.LastAppliedConfigAnnotation && !strings.HasPrefix(k, "orkestra.orkspace.io/") {
			out.Annotations[k] = v
		}
	}
	byKind := map[string][]katalogapi.ChildSummary{}
	for i := range kids {
		c := &kids[i]
		ok, _ := readiness.Of(c)
		st, _, _ := unstructured.NestedMap(c.Object, "status")
		byKind[c.GetKind()] = append(byKind[c.GetKind()], katalogapi.ChildSummary{Name: c.GetName(), Namespace: c.GetNamespace(), Kind: c.GetKind(), Status: st, Ready: ok})
	}
	for kind, cs := range byKind {
		sort.Slice(cs, func(i, j int) bool { return cs[i].Namespace+"/"+cs[i].Name < cs[j].Namespace+"/"+cs[j].Name })
		if len(cs) == 1 {
			out.Children[kind] = cs[0]
		} else {
			out.Children[kind] = cs
		}
	}
	return out
}

func (k *katalogAPI) crEvents(ctx context.Context, w http.ResponseWriter, e *engine.Entry, namespace, name string) {
	evs, err := k.resources.Events(ctx, e.Name, namespace, name)
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
		return
	}
	out := katalogapi.CREvents{Name: name, Namespace: namespace, Events: make([]katalogapi.CREvent, 0, len(evs))}
	for _, ev := range evs {
		out.Events = append(out.Events, k.event(ev))
	}
	sort.SliceStable(out.Events, func(i, j int) bool { return out.Events[i].LastSeen > out.Events[j].LastSeen })
	if len(out.Events) > maxEvents {
		out.Events = out.Events[:maxEvents]
	}
	out.Total = len(out.Events)
	writeJSON(w, http.StatusOK, out)
}

func (k *katalogAPI) event(ev corev1.Event) katalogapi.CREvent {
	first, last := ev.FirstTimestamp.Time, ev.LastTimestamp.Time
	if last.IsZero() {
		last = ev.EventTime.Time // events.k8s.io events carry only eventTime
	}
	if first.IsZero() {
		first = last
	}
	source := ev.Source.Component
	if source == "" {
		source = ev.ReportingController
	}
	count := ev.Count
	if count == 0 {
		count = 1
	}
	return katalogapi.CREvent{
		Type:      ev.Type,
		Reason:    ev.Reason,
		Message:   ev.Message,
		Source:    source,
		Object:    ev.InvolvedObject.Kind + "/" + ev.InvolvedObject.Name,
		Count:     count,
		FirstSeen: first.UTC().Format(time.RFC3339),
		LastSeen:  last.UTC().Format(time.RFC3339),
		Age:       duration.HumanDuration(k.now().Sub(last)),
	}
}
