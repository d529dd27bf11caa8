package admission

import (
	"context"
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/orkspace/orkestra-cel/engine"
)

// FieldManager is the server-side apply field manager of the policies.
const FieldManager = "orkestra-admission"

// ErrUnsupported says the cluster does not serve the admission policy APIs a
// katalog needs.
var ErrUnsupported = errors.New("admission policies not served")

// Check reports, through discovery, whether the cluster serves the policy
// APIs the plan needs: ValidatingAdmissionPolicy (Kubernetes 1.30 or
// newer) always, MutatingAdmissionPolicy (admissionregistration.k8s.io/v1,
// Kubernetes 1.36 or newer) when the katalog declares mutations.
func Check(d discovery.DiscoveryInterface, plan *engine.Plan) error {
	if len(Policies(plan)) == 0 {
		return nil
	}
	list, err := d.ServerResourcesForGroupVersion("admissionregistration.k8s.io/v1")
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("discovering admissionregistration.k8s.io/v1: %w", err)
	}
	served := map[string]bool{}
	if list != nil {
		for _, r := range list.APIResources {
			served[r.Name] = true
		}
	}
	need := map[string]string{"validatingadmissionpolicies": "ValidatingAdmissionPolicy (Kubernetes 1.30 or newer)"}
	if NeedsMutating(plan) {
		need["mutatingadmissionpolicies"] = "MutatingAdmissionPolicy (Kubernetes 1.36 or newer)"
	}
	for res, what := range need {
		if !served[res] {
			return fmt.Errorf("the cluster does not serve admissionregistration.k8s.io/v1 %s, which the katalog's admission rules need: %s; upgrade the cluster, or pass --without-admission-policies to run with the rules not enforced: %w", res, what, ErrUnsupported)
		}
	}
	return nil
}

// policyKinds are the kinds Apply manages, as list types.
var policyKinds = []client.ObjectList{
	&admissionv1.ValidatingAdmissionPolicyBindingList{},
	&admissionv1.ValidatingAdmissionPolicyList{},
	&admissionv1.MutatingAdmissionPolicyBindingList{},
	&admissionv1.MutatingAdmissionPolicyList{},
}

// Removed is a policy or binding Apply deleted.
type Removed struct {
	Kind, Name string
	UID        types.UID
}

func (r Removed) String() string { return r.Kind + "/" + r.Name }

// Apply server-side-applies the plan's policies and deletes the policies
// the katalog owned (LabelKatalog) that it no longer declares. It returns
// what it applied ("Kind/name" each) and deleted.
func Apply(ctx context.Context, c client.Client, scheme *runtime.Scheme, plan *engine.Plan) (applied []string, deleted []Removed, err error) {
	want := map[string]bool{}
	for _, o := range Policies(plan) {
		u, err := toUnstructured(scheme, o)
		if err != nil {
			return applied, deleted, err
		}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return applied, deleted, fmt.Errorf("applying %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		key := u.GetKind() + "/" + u.GetName()
		want[key] = true
		applied = append(applied, key)
	}
	name := katalogName(plan)
	for _, list := range policyKinds {
		if err := c.List(ctx, list, client.MatchingLabels{LabelKatalog: name}); err != nil {
			if apierrors.IsNotFound(err) || isNoMatch(err) {
				continue
			}
			return applied, deleted, fmt.Errorf("listing the katalog's policies: %w", err)
		}
		items, err := itemsOf(list)
		if err != nil {
			return applied, deleted, err
		}
		for _, o := range items {
			gvk, err := apiutil.GVKForObject(o, scheme)
			if err != nil {
				return applied, deleted, err
			}
			key := gvk.Kind + "/" + o.GetName()
			if want[key] {
				continue
			}
			if err := c.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
				return applied, deleted, fmt.Errorf("removing %s, which the katalog no longer declares: %w", key, err)
			}
			deleted = append(deleted, Removed{Kind: gvk.Kind, Name: o.GetName(), UID: o.GetUID()})
		}
	}
	return applied, deleted, nil
}

func itemsOf(list client.ObjectList) ([]client.Object, error) {
	var out []client.Object
	switch l := list.(type) {
	case *admissionv1.ValidatingAdmissionPolicyList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *admissionv1.ValidatingAdmissionPolicyBindingList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *admissionv1.MutatingAdmissionPolicyList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *admissionv1.MutatingAdmissionPolicyBindingList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	default:
		return nil, fmt.Errorf("unexpected list %T", list)
	}
	return out, nil
}

func toUnstructured(scheme *runtime.Scheme, o client.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetKind() == "" {
		gvk, err := apiutil.GVKForObject(o, scheme)
		if err != nil {
			return nil, err
		}
		u.SetGroupVersionKind(gvk)
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	return u, nil
}

func isNoMatch(err error) bool { return meta.IsNoMatchError(err) }
