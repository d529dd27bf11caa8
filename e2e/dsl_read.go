package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kfields "k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/jsonpath"
	kdescribe "k8s.io/kubectl/pkg/describe"
	sigsyaml "sigs.k8s.io/yaml"
)

// getOutput is `kubectl get KIND NAME -o jsonpath={FIELD}` (missing keys
// print nothing, as kubectl), or the object as JSON or YAML through jq/yq.
func (k *kube) getOutput(ctx context.Context, g *KGet) (string, error) {
	o, _, err := k.get(ctx, g.Target.Kind, g.Target.Name, g.Target.Namespace)
	if err != nil {
		return "", err
	}
	if g.Field != "" {
		field := g.Field
		if !strings.HasPrefix(field, ".") && !strings.HasPrefix(field, "{") {
			field = "." + field
		}
		if !strings.HasPrefix(field, "{") {
			field = "{" + field + "}"
		}
		jp := jsonpath.New("field").AllowMissingKeys(true)
		if err := jp.Parse(field); err != nil {
			return "", fmt.Errorf("field %q is not a jsonpath: %w", g.Field, err)
		}
		var b bytes.Buffer
		if err := jp.Execute(&b, o.Object); err != nil {
			return "", fmt.Errorf("field %q: %w", g.Field, err)
		}
		return b.String(), nil
	}
	// As kubectl (--show-managed-fields=false).
	unstructured.RemoveNestedField(o.Object, "metadata", "managedFields")
	var text []byte
	if g.Format == "yaml" {
		text, err = sigsyaml.Marshal(o.Object)
	} else {
		text, err = json.MarshalIndent(o.Object, "", "    ")
	}
	if err != nil {
		return "", err
	}
	return g.Extract.apply(string(text))
}

// describe is `kubectl describe`, by kubectl's own describers.
func (k *kube) describe(ctx context.Context, d *KDescribe) (string, error) {
	m, err := k.mapping(d.Target.Kind)
	if err != nil {
		return "", err
	}
	desc, ok := kdescribe.DescriberFor(m.GroupVersionKind.GroupKind(), k.cfg)
	if !ok {
		if desc, ok = kdescribe.GenericDescriberFor(m, k.cfg); !ok {
			return "", fmt.Errorf("no describer for %s", m.GroupVersionKind.Kind)
		}
	}
	names := []string{d.Target.Name}
	if d.Target.Name == "" {
		objs, _, err := k.list(ctx, d.Target.Kind, d.Target.Namespace, d.Target.LabelSelector)
		if err != nil {
			return "", err
		}
		names = nil
		for _, o := range objs {
			names = append(names, o.GetName())
		}
		if len(names) == 0 {
			return "", fmt.Errorf("no %s matches %s", d.Target.Kind, d.Target.LabelSelector)
		}
	}
	var parts []string
	for _, n := range names {
		s, err := desc.Describe(ns(m, d.Target.Namespace), n, kdescribe.DescriberSettings{ShowEvents: true, ChunkSize: 500})
		if err != nil {
			return "", err
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "\n\n"), nil
}

// events is `kubectl events --for KIND/NAME`: the object's events, oldest
// first, as kubectl's table.
func (k *kube) events(ctx context.Context, e *KEvents) (string, error) {
	m, err := k.mapping(e.Target.Kind)
	if err != nil {
		return "", err
	}
	kind := m.GroupVersionKind.Kind
	sel := kfields.Set{"involvedObject.kind": kind, "involvedObject.name": e.Target.Name}.AsSelector().String()
	list, err := k.cs.CoreV1().Events(ns(m, e.Target.Namespace)).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return "", err
	}
	items := list.Items
	sort.SliceStable(items, func(i, j int) bool { return eventTime(items[i]).Before(eventTime(items[j])) })
	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 0, 8, 3, ' ', 0)
	fmt.Fprintln(w, "LAST SEEN\tTYPE\tREASON\tOBJECT\tMESSAGE")
	for _, ev := range items {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s/%s\t%s\n", duration.HumanDuration(time.Since(eventTime(ev))), ev.Type, ev.Reason, kind, e.Target.Name, strings.TrimSpace(ev.Message))
	}
	w.Flush()
	if len(items) == 0 {
		return fmt.Sprintf("No events found in %s namespace.\n", ns(m, e.Target.Namespace)), nil
	}
	return b.String(), nil
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// auth is `kubectl auth can-i VERB RESOURCE [-n NS] [--as AS]`: "yes" or
// "no", from a SelfSubjectAccessReview (as AS, impersonated).
func (k *kube) auth(ctx context.Context, a *KAuth) (string, error) {
	cs := k.cs
	if a.As != "" {
		cfg := rest.CopyConfig(k.cfg)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: a.As}
		var err error
		if cs, err = kubernetes.NewForConfig(cfg); err != nil {
			return "", err
		}
	}
	res, sub, _ := strings.Cut(a.Resource, "/")
	attrs := &authorizationv1.ResourceAttributes{Verb: a.Verb, Resource: res, Subresource: sub, Namespace: a.Namespace}
	if m, err := k.mapping(res); err == nil {
		attrs.Group, attrs.Resource = m.Resource.Group, m.Resource.Resource
	}
	review, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: attrs}}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	if review.Status.Allowed {
		return "yes", nil
	}
	return "no", nil
}
