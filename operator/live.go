package operator

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/operator/external"
)

// Reasons of the events and Ready condition external calls report.
const (
	ReasonExternalCallFailed = "ExternalCallFailed"
	ReasonCrossReadFailed    = "CrossReadFailed"
)

// live reads the entry's live inputs for one reconcile of cr: its cross
// reads, from the informers (recorded in the read index, so that a change
// to what was read reconciles cr again), its remote cross reads, then the
// external calls of the hooks rendered, in declaration order. A call that
// fails with continueOnError, or a remote read that fails without
// continueOnError: false, is returned in failed (its result says why);
// otherwise the failure fails the reconcile.
func (e *entryController) live(ctx context.Context, cr *unstructured.Unstructured, kids map[string]any, hooks []string) (live *engine.Live, failed []liveFailure, err error) {
	live = e.entry.NewLive()
	if len(e.entry.Observations) == 0 && len(e.entry.Remote) == 0 && len(e.entry.External) == 0 {
		return live, nil, nil
	}
	self, err := e.entry.Normalize.Apply(cr.Object)
	if err != nil {
		return nil, nil, fmt.Errorf("normalize: %w", err)
	}
	if err := e.readCross(ctx, cr, self, kids, live); err != nil {
		return nil, nil, err
	}
	if failed, err = e.readRemote(ctx, cr, e.entry.Scope(self, kids, live), live); err != nil {
		return nil, nil, err
	}
	for _, call := range e.entry.External {
		if !slices.Contains(hooks, call.Source.Hook) {
			continue
		}
		res, err := e.callExternal(ctx, cr, call, e.entry.Scope(self, kids, live))
		if err != nil {
			return nil, nil, err
		}
		live.SetExternal(call.Source.Name, res)
		if res.Error == "" {
			continue
		}
		msg := fmt.Sprintf("external call %s (%s) failed: %s", call.Source.Name, call.Source.Field, res.Error)
		if !call.Source.ContinueOnError {
			return nil, nil, &liveError{reason: ReasonExternalCallFailed, msg: msg}
		}
		failed = append(failed, liveFailure{reason: ReasonExternalCallFailed, msg: msg})
	}
	return live, failed, nil
}

// liveError is a live input that failed the reconcile; reason is the Ready
// condition's.
type liveError struct {
	reason, msg string
}

func (l *liveError) Error() string { return l.msg }

// readCross reads every cross read of the entry and records them in the
// read index.
func (e *entryController) readCross(ctx context.Context, cr *unstructured.Unstructured, self, kids map[string]any, live *engine.Live) error {
	var reads []read
	defer func() { e.readIndex.set(client.ObjectKeyFromObject(cr), reads) }()
	scope := e.entry.Scope(self, kids, nil)
	for _, o := range e.entry.Observations {
		if !o.Source.Exposed() {
			continue
		}
		if o.Source.Denied {
			// crossAccess: false on the entry read: nothing is read.
			live.SetCross(o, nil)
			continue
		}
		r, objs, err := e.crossRead(ctx, cr, o, scope)
		if r != nil {
			reads = append(reads, *r)
		}
		if err != nil {
			return &liveError{reason: ReasonCrossReadFailed, msg: fmt.Sprintf("cross read %s (%s): %v", o.Source.As, o.Source.Field, err)}
		}
		live.SetCross(o, objs)
	}
	return nil
}

// crossRead evaluates a cross read's selector over the custom resource and
// reads what it selects from the cache.
func (e *entryController) crossRead(ctx context.Context, cr *unstructured.Unstructured, o *engine.Observation, scope *engine.Scope) (*read, []map[string]any, error) {
	str := func(n *engine.Node) (string, bool, error) {
		if n == nil {
			return "", false, nil
		}
		v, ok, err := n.Eval(scope)
		if err != nil || !ok {
			return "", false, err
		}
		s, _ := v.(string)
		return s, true, nil
	}
	name, hasName, err := str(o.Name)
	if err != nil {
		return nil, nil, err
	}
	namespace, hasNS, err := str(o.Namespace)
	if err != nil {
		return nil, nil, err
	}
	selText, _, err := str(o.LabelSelector)
	if err != nil {
		return nil, nil, err
	}
	namespaced, err := e.isNamespaced(o.GVK)
	if err != nil {
		return nil, nil, fmt.Errorf("%s is not served by the API server: %w", o.GVK, err)
	}
	switch {
	case !namespaced && hasNS && namespace != "":
		return nil, nil, fmt.Errorf("%s is cluster-scoped, but the selector names namespace %q", o.GVK.Kind, namespace)
	case !namespaced:
		namespace = ""
	case !hasNS || namespace == "":
		namespace = cr.GetNamespace()
	}
	if hasName {
		r := &read{GVK: o.GVK, Namespace: namespace, Name: name}
		if name == "" {
			return r, nil, nil
		}
		obj, err := e.getObserved(ctx, o, types.NamespacedName{Namespace: namespace, Name: name})
		if err != nil || obj == nil {
			return r, nil, err
		}
		return r, []map[string]any{obj}, nil
	}
	sel := labels.Everything()
	if selText != "" {
		if sel, err = labels.Parse(selText); err != nil {
			return nil, nil, fmt.Errorf("labelSelector %q: %w", selText, err)
		}
	}
	r := &read{GVK: o.GVK, Namespace: namespace, Selector: sel}
	objs, err := e.listObserved(ctx, o, namespace, sel)
	if err != nil {
		return r, nil, err
	}
	if max := o.Source.MaxMatches; len(objs) > max {
		return r, nil, fmt.Errorf("selects %d objects, more than maxMatches (%d); narrow its labelSelector or raise maxMatches", len(objs), max)
	}
	return r, objs, nil
}

// getObserved reads one observed object from the cache; nil when absent.
func (e *entryController) getObserved(ctx context.Context, o *engine.Observation, key types.NamespacedName) (map[string]any, error) {
	obj, err := newObject(e.scheme, o.GVK)
	if err != nil {
		return nil, err
	}
	if err := e.client.Get(ctx, key, obj, client.UnsafeDisableDeepCopy); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil, nil
		}
		return nil, err
	}
	return e.objectMap(obj)
}

// listObserved lists observed objects from the cache.
func (e *entryController) listObserved(ctx context.Context, o *engine.Observation, namespace string, sel labels.Selector) ([]map[string]any, error) {
	var list client.ObjectList
	if e.scheme.Recognizes(o.GVK) {
		l, err := e.scheme.New(o.GVK.GroupVersion().WithKind(o.GVK.Kind + "List"))
		if err != nil {
			return nil, err
		}
		list = l.(client.ObjectList)
	} else {
		ul := &unstructured.UnstructuredList{}
		ul.SetGroupVersionKind(o.GVK.GroupVersion().WithKind(o.GVK.Kind + "List"))
		list = ul
	}
	opts := []client.ListOption{client.MatchingLabelsSelector{Selector: sel}, client.UnsafeDisableDeepCopy}
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := e.client.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		obj, ok := it.(client.Object)
		if !ok {
			continue
		}
		m, err := e.objectMap(obj)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// objectMap is an observed object as expressions read it; objects from the
// cache are shared and only read.
func (e *entryController) objectMap(obj client.Object) (map[string]any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.Object, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	gvk, _, err := e.scheme.ObjectKinds(obj)
	if err == nil && len(gvk) > 0 {
		m["apiVersion"], m["kind"] = gvk[0].GroupVersion().String(), gvk[0].Kind
	}
	return m, nil
}

// callExternal evaluates a call over scope and makes it (through the
// operator's external client, which caches and guards it).
func (e *entryController) callExternal(ctx context.Context, cr *unstructured.Unstructured, call *engine.ExternalCall, scope *engine.Scope) (engine.ExternalResult, error) {
	src := call.Source
	if call.When != nil {
		ok, err := call.When.Eval(scope)
		if err != nil {
			return engine.ExternalResult{}, fmt.Errorf("%s.when: evaluating %s: %w", src.Field, call.When.Source(), err)
		}
		if !ok {
			return engine.ExternalResult{}, nil
		}
	}
	text := func(n *engine.Node) (string, error) {
		if n == nil {
			return "", nil
		}
		v, ok, err := n.Eval(scope)
		if err != nil || !ok {
			return "", err
		}
		return fmt.Sprint(v), nil
	}
	url, err := text(call.URL)
	if err != nil {
		return engine.ExternalResult{}, err
	}
	body, err := text(call.Body)
	if err != nil {
		return engine.ExternalResult{}, err
	}
	req := external.Request{
		Owner: string(cr.GetUID()), Name: src.Name, Method: src.Method, URL: strings.TrimSpace(url), Body: body,
		AllowedHosts: e.op.plan.Katalog.AllowedHosts, Timeout: src.Timeout, Retries: src.Retries, MaxBytes: src.MaxBytes,
		CacheFor: src.CacheFor, ExpectedStatus: src.ExpectedStatus, Schema: e.op.bodySchemas[src.JSONSchema],
	}
	if call.Headers != nil {
		v, _, err := call.Headers.Eval(scope)
		if err != nil {
			return engine.ExternalResult{}, err
		}
		m, _ := v.(map[string]any)
		req.Headers = make(map[string]string, len(m))
		for k, hv := range m {
			req.Headers[k] = fmt.Sprint(hv)
		}
	}
	req.Credential = e.credential(cr, src.TokenEnv, src.Auth)
	return e.op.external.Do(ctx, req), nil
}

// credential returns how a call reads its Authorization value: from the
// operator's environment variable tokenEnv, or from the Secret auth names;
// nil when it sends none.
func (e *entryController) credential(cr *unstructured.Unstructured, tokenEnv string, auth *katalog.ExternalAuth) func(context.Context) (string, error) {
	switch {
	case tokenEnv != "":
		return func(context.Context) (string, error) {
			tok, ok := os.LookupEnv(tokenEnv)
			if !ok || tok == "" {
				return "", fmt.Errorf("the operator's environment variable %s (token:) is not set", tokenEnv)
			}
			return "Bearer " + tok, nil
		}
	case auth != nil:
		return func(ctx context.Context) (string, error) {
			return e.secretCredential(ctx, cr, auth.Secret, auth.Namespace, auth.Key, auth.Scheme)
		}
	}
	return nil
}

// secretCredential reads an Authorization value from a Secret (read from
// the API server, only when a call is made).
func (e *entryController) secretCredential(ctx context.Context, cr *unstructured.Unstructured, name, namespace, key, scheme string) (string, error) {
	if namespace == "" {
		namespace = cr.GetNamespace()
	}
	var s corev1.Secret
	if err := e.reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &s); err != nil {
		return "", fmt.Errorf("Secret %s/%s: %w", namespace, name, err)
	}
	v, ok := s.Data[key]
	if !ok || len(v) == 0 {
		return "", fmt.Errorf("Secret %s/%s has no key %q", namespace, name, key)
	}
	if scheme == "Basic" {
		return external.BasicCredential(string(v)), nil
	}
	return "Bearer " + strings.TrimSpace(string(v)), nil
}

// liveFailure is a live input that failed without failing the reconcile.
type liveFailure struct {
	reason, msg string
}

// liveFailed reports live inputs that failed without failing the reconcile
// (continueOnError): a Warning event each, and the text for the Ready
// condition's message.
func (e *entryController) liveFailed(cr *unstructured.Unstructured, failed []liveFailure) string {
	msgs := make([]string, len(failed))
	for i, f := range failed {
		e.recorder.Eventf(cr, nil, corev1.EventTypeWarning, f.reason, "Reconcile", "%s (continueOnError: the reconcile went on)", truncate(f.msg, 1024))
		msgs[i] = f.msg
	}
	return truncate(strings.Join(msgs, "; "), 4096)
}
