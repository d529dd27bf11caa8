package operator

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/operator/external"
)

// readRemote reads the entry's cross reads with source: through the
// operator's external client (bounded, guarded, cached for cacheFor per
// custom resource and URL). An answer of 404 reads as not found, as
// upstream's. A read that fails otherwise reads as not found too and is
// returned in failed — upstream goes on without it — unless it declares
// continueOnError: false, when it fails the reconcile (CrossReadFailed).
func (e *entryController) readRemote(ctx context.Context, cr *unstructured.Unstructured, scope *engine.Scope, live *engine.Live) (failed []liveFailure, err error) {
	for _, r := range e.entry.Remote {
		answer, rerr := e.remoteRead(ctx, cr, r, scope)
		if rerr == nil {
			live.SetRemote(r.Source.As, answer)
			continue
		}
		msg := fmt.Sprintf("cross read %s (%s) failed: %v", r.Source.As, r.Source.Field, rerr)
		if r.Source.Remote.FailReconcile {
			return nil, &liveError{reason: ReasonCrossReadFailed, msg: msg}
		}
		live.SetRemote(r.Source.As, nil)
		failed = append(failed, liveFailure{reason: ReasonCrossReadFailed, msg: msg + "; it reads as not found"})
	}
	return failed, nil
}

// remoteRead makes one remote read: its answer, nil when not found.
func (e *entryController) remoteRead(ctx context.Context, cr *unstructured.Unstructured, r *engine.RemoteRead, scope *engine.Scope) (map[string]any, error) {
	src := r.Source.Remote
	url, err := e.remoteURL(cr, r, scope)
	if err != nil {
		return nil, err
	}
	res := e.op.external.Do(ctx, external.Request{
		Owner: string(cr.GetUID()), Name: "cross." + r.Source.As, Method: http.MethodGet, URL: url,
		Credential: e.credential(cr, src.TokenEnv, src.Auth), AllowedHosts: e.op.plan.Katalog.AllowedHosts,
		Timeout: src.Timeout, Retries: src.Retries, MaxBytes: src.MaxBytes, CacheFor: src.CacheFor,
		Schema: e.op.bodySchemas[src.JSONSchema],
	})
	switch {
	case !res.Called:
		return nil, nil // calls are off (simulate --skip-external)
	case res.Status == http.StatusNotFound:
		return nil, nil
	case res.Error != "":
		return nil, fmt.Errorf("%s", res.Error)
	}
	answer, ok := res.JSON.(map[string]any)
	if !res.HasJSON || !ok {
		return nil, fmt.Errorf("GET %s: the answer is not a JSON object", url)
	}
	return answer, nil
}

// remoteURL is the URL a remote read asks: its endpoint evaluated, or the
// route of host: for the entry crd: names (a per-object route for the
// custom resource the selector names, in the custom resource's namespace
// unless it names another).
func (e *entryController) remoteURL(cr *unstructured.Unstructured, r *engine.RemoteRead, scope *engine.Scope) (string, error) {
	text := func(n *engine.Node, field string) (string, error) {
		if n == nil {
			return "", nil
		}
		v, ok, err := n.Eval(scope)
		if err != nil {
			return "", fmt.Errorf("%s: %w", field, err)
		}
		if !ok {
			return "", nil
		}
		return strings.TrimSpace(fmt.Sprint(v)), nil
	}
	src := r.Source.Remote
	if r.Endpoint != nil {
		return text(r.Endpoint, "endpoint")
	}
	if !src.Protocol.PerObject() {
		return src.Protocol.URL(src.Host, r.Source.Entry, "", ""), nil
	}
	name, err := text(r.Name, "selector.name")
	if err != nil {
		return "", err
	}
	if name == "" {
		return "", fmt.Errorf("selector.name is empty: the %s route names one custom resource", src.Protocol)
	}
	namespace, err := text(r.Namespace, "namespace")
	if err != nil {
		return "", err
	}
	if namespace == "" {
		namespace = cr.GetNamespace()
	}
	return src.Protocol.URL(src.Host, r.Source.Entry, namespace, name), nil
}
