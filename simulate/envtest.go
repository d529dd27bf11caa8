package simulate

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/orkspace/orkestra-cel/lifecycle/crdspec"
)

// envtestCluster starts a kube-apiserver and etcd (controller-runtime's
// envtest, binaries from the directory assets) with the spec's CRDs installed
// as orkestra manifests would install them — except conversion: every
// object is created at the version its entry reconciles, so no conversion
// webhook is configured.
func envtestCluster(p *prepared, assets string) (*cluster, error) {
	if assets == "" {
		return nil, errors.New("--envtest runs a kube-apiserver and etcd: give the directory holding them (--assets, or KUBEBUILDER_ASSETS; hack/envtest-assets.sh provides them)")
	}
	env := &envtest.Environment{CRDs: installable(p), BinaryAssetsDirectory: assets}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting the API server (envtest, binaries in %s): %w", assets, err)
	}
	scheme := builtIns().scheme
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &cluster{client: c, mapper: c.RESTMapper(), scheme: scheme, stop: env.Stop, apiServer: true}, nil
}

// installable are the CRDs to install: the katalog's as crdspec builds
// them (admission rules included), the spec's as written, none converting.
func installable(p *prepared) []*apiextensionsv1.CustomResourceDefinition {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range p.crds {
		c := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crd.Name}, Spec: *crd.Spec.DeepCopy()}
		for _, e := range p.plan.Entries {
			if src := e.Source.CRD; src != nil && src.Object == crd {
				c.Spec, _ = crdspec.Spec(p.plan, src, apiextensionsv1.WebhookClientConfig{})
				break
			}
		}
		c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
		out = append(out, c)
	}
	return out
}

// ensureNamespace creates namespace ns on an API server when it is missing
// (the in-memory cluster does not need namespaces to exist).
func ensureNamespace(ctx context.Context, c *cluster, ns string) error {
	if !c.apiServer || ns == "" {
		return nil
	}
	err := c.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	return nil
}
