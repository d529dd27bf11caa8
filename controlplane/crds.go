package controlplane

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/orkspace/orkestra-cel/admission"
	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/lifecycle/crdspec"
)

// Installed are the CRDs a katalog installed, with the conversion strategy
// of each (by CRD name).
type Installed struct {
	CRDs       []*apiextensionsv1.CustomResourceDefinition
	Strategies map[string]crdspec.Strategy
}

// InstallCRDs installs the katalog's CRDs (crdspec: deprecations, and
// conversion through the webhook where one is needed), replacing the spec of
// one that exists, and waits until each is established.
func InstallCRDs(ctx context.Context, cfg *rest.Config, plan *engine.Plan, wh *Webhook) (*Installed, error) {
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	out := &Installed{Strategies: map[string]crdspec.Strategy{}}
	seen := map[string]bool{}
	for _, e := range plan.Entries {
		src := e.Source.CRD
		if src == nil || src.Origin == katalog.BuiltIn || seen[src.Object.Name] {
			continue // built-in kinds are served by the API server itself
		}
		seen[src.Object.Name] = true
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: src.Object.Name, Labels: src.Object.Labels, Annotations: crdspec.Annotations(plan, src)},
		}
		var strategy crdspec.Strategy
		crd.Spec, strategy = crdspec.Spec(plan, src, apiextensionsv1.WebhookClientConfig{URL: &wh.URL, CABundle: wh.CAPEM})
		out.Strategies[crd.Name] = strategy
		installed, err := createOrReplace(ctx, ext, crd)
		if err != nil {
			return nil, fmt.Errorf("installing CRD %s (from %s): %w", crd.Name, src.Path, err)
		}
		out.CRDs = append(out.CRDs, installed)
	}
	for _, c := range out.CRDs {
		if err := WaitEstablished(ctx, ext, c.Name); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func createOrReplace(ctx context.Context, ext apiextensionsclient.Interface, crd *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	created, err := crds.Create(ctx, crd, metav1.CreateOptions{FieldManager: FieldManager})
	if !apierrors.IsAlreadyExists(err) {
		return created, err
	}
	old, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	old.Spec = crd.Spec
	if rules, ok := crd.Annotations[admission.AnnotationRules]; ok {
		metav1.SetMetaDataAnnotation(&old.ObjectMeta, admission.AnnotationRules, rules)
	} else {
		delete(old.Annotations, admission.AnnotationRules)
	}
	return crds.Update(ctx, old, metav1.UpdateOptions{FieldManager: FieldManager})
}

// WaitEstablished waits up to 30 seconds for a CRD to be established, and
// fails at once when its names are not accepted.
func WaitEstablished(ctx context.Context, ext apiextensionsclient.Interface, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
			if cond.Type == apiextensionsv1.NamesAccepted && cond.Status == apiextensionsv1.ConditionFalse {
				return false, fmt.Errorf("CRD %s: %s", name, cond.Message)
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not established: %w", name, err)
	}
	return nil
}
