package simulate

import (
	"context"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/meta/testrestmapper"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/uuid"
	clientgoapplyconfigurations "k8s.io/client-go/applyconfigurations"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/orkspace/orkestra-cel/operator"
	"github.com/orkspace/orkestra-cel/workloads"
)

// cluster is where a run's objects live: in memory, or a real API server
// (--envtest).
type cluster struct {
	// client reads and writes without recording (seeding, simulated
	// workload status).
	client client.WithWatch
	mapper meta.RESTMapper
	scheme *runtime.Scheme
	// stop releases the cluster.
	stop func() error
	// apiServer is true for a real API server (namespaces must exist).
	apiServer bool
}

// builtIns is what every cluster shares, built once: the scheme of the
// built-in kinds, their REST mappings, their plurals, and the type
// converters the fake client's server-side apply needs. None is written
// to after it is built.
var builtIns = sync.OnceValue(func() *builtIn {
	scheme := operator.Scheme()
	b := &builtIn{
		scheme:     scheme,
		mapper:     testrestmapper.TestOnlyStaticRESTMapper(scheme),
		plurals:    map[string]bool{},
		converters: []managedfields.TypeConverter{statusless{clientgoapplyconfigurations.NewTypeConverter(scheme)}, managedfields.NewDeducedTypeConverter()},
	}
	for gvk := range scheme.AllKnownTypes() {
		if m, err := b.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			b.plurals[m.Resource.Resource] = true
		}
	}
	return b
})

type builtIn struct {
	scheme     *runtime.Scheme
	mapper     meta.RESTMapper
	plurals    map[string]bool
	converters []managedfields.TypeConverter
}

// mapperFor maps the built-in kinds, the kinds of crds and the untyped
// kinds (custom children without a CRD: namespaced, their plural guessed as
// the API machinery guesses it), and lists the kinds whose status is a
// subresource: every CRD version with one, and the simulated workloads.
func mapperFor(crds []*apiextensionsv1.CustomResourceDefinition, untyped []schema.GroupVersionKind) (meta.RESTMapper, []client.Object) {
	custom := meta.NewDefaultRESTMapper(nil)
	withStatus := workloads.Objects()
	for _, crd := range crds {
		scope := meta.RESTScopeNamespace
		if crd.Spec.Scope == apiextensionsv1.ClusterScoped {
			scope = meta.RESTScopeRoot
		}
		for _, v := range crd.Spec.Versions {
			gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
			plural := gvk.GroupVersion().WithResource(crd.Spec.Names.Plural)
			singular := gvk.GroupVersion().WithResource(crd.Spec.Names.Singular)
			custom.AddSpecific(gvk, plural, singular, scope)
			if v.Subresources != nil && v.Subresources.Status != nil {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(gvk)
				withStatus = append(withStatus, u)
			}
		}
	}
	for _, gvk := range untyped {
		plural, singular := meta.UnsafeGuessKindToResource(gvk)
		custom.AddSpecific(gvk, plural, singular, meta.RESTScopeNamespace)
	}
	return meta.MultiRESTMapper{custom, builtIns().mapper}, withStatus
}

// memoryCluster is controller-runtime's fake client: an object tracker
// serving the built-in kinds, the kinds of crds and the untyped kinds, with the status
// subresources mapperFor lists. Like the API server, it sets uid,
// creationTimestamp and generation on create. It does not run admission,
// validate objects against their schema, garbage-collect children, or
// convert between versions.
func memoryCluster(crds []*apiextensionsv1.CustomResourceDefinition, untyped []schema.GroupVersionKind) *cluster {
	b := builtIns()
	mapper, withStatus := mapperFor(crds, untyped)
	c := fake.NewClientBuilder().
		WithScheme(b.scheme).
		WithRESTMapper(mapper).
		WithTypeConverters(b.converters...).
		WithStatusSubresource(withStatus...).
		WithInterceptorFuncs(interceptor.Funcs{Create: createAsAPIServer, Apply: applyAsAPIServer}).
		Build()
	return &cluster{client: c, mapper: mapper, scheme: b.scheme, stop: func() error { return nil }}
}

// createAsAPIServer sets the metadata the API server sets on create.
func createAsAPIServer(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
	if obj.GetUID() == "" {
		obj.SetUID(types.UID(uuid.NewUUID()))
	}
	if ts := obj.GetCreationTimestamp(); ts.IsZero() {
		obj.SetCreationTimestamp(metav1.NewTime(time.Now().UTC().Truncate(time.Second)))
	}
	if obj.GetGeneration() == 0 {
		obj.SetGeneration(1)
	}
	return c.Create(ctx, obj, opts...)
}

// applyAsAPIServer sets the metadata the API server sets on create when an
// apply creates the object (the fake's apply leaves it out, and refuses an
// apply that names a uid for an object that does not exist).
func applyAsAPIServer(ctx context.Context, c client.WithWatch, cfg runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	obj, ok := cfg.(runtime.Unstructured)
	if !ok {
		return c.Apply(ctx, cfg, opts...)
	}
	u := &unstructured.Unstructured{Object: obj.UnstructuredContent()}
	probe := &unstructured.Unstructured{}
	probe.SetGroupVersionKind(u.GroupVersionKind())
	absent := apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(u), probe))
	if err := c.Apply(ctx, cfg, opts...); err != nil || !absent {
		return err
	}
	created := &unstructured.Unstructured{Object: obj.UnstructuredContent()}
	created.SetUID(types.UID(uuid.NewUUID()))
	created.SetCreationTimestamp(metav1.NewTime(time.Now().UTC().Truncate(time.Second)))
	created.SetGeneration(1)
	if err := c.Update(ctx, created); err != nil {
		return err
	}
	obj.SetUnstructuredContent(created.Object)
	return nil
}
