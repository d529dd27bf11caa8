package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// kube is the cluster a spec runs on, as the DSL, the resource checks and
// setup reach it: client-go, no kubectl.
type kube struct {
	cfg *rest.Config
	dyn dynamic.Interface
	cs  kubernetes.Interface
	// Kubeconfig is exported to commands as KUBECONFIG.
	kubeconfig string
	// noNodes: no kubelet runs here (the local control plane), so no
	// container ever starts.
	noNodes bool
	// runtimeHTTP is the address of the in-process runtime's HTTP API
	// (/katalog, /metrics, …), "" when none runs in this process.
	runtimeHTTP string

	mu     sync.Mutex
	disc   discovery.CachedDiscoveryInterface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newKube(cfg *rest.Config, kubeconfig string) (*kube, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 100, 200
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc := memory.NewMemCacheClient(cs.Discovery())
	return &kube{cfg: cfg, dyn: dyn, cs: cs, kubeconfig: kubeconfig, disc: disc,
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(disc)}, nil
}

// mapping resolves a kind as kubectl reads it — Kind, singular, plural or
// short name, optionally with .group (Deployment, deploy, deployments.apps)
// — or an object's "apiVersion/Kind" to its resource. A miss refreshes discovery once (a CRD just
// installed).
func (k *kube) mapping(kind string) (*meta.RESTMapping, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	m, err := k.lookup(kind)
	if err != nil {
		k.mapper.Reset()
		m, err = k.lookup(kind)
	}
	if err != nil {
		return nil, fmt.Errorf("the cluster serves no kind %q: %w", kind, err)
	}
	return m, nil
}

func (k *kube) lookup(kind string) (*meta.RESTMapping, error) {
	if i := strings.LastIndex(kind, "/"); i > 0 { // an object's apiVersion/Kind
		gvk := schema.FromAPIVersionAndKind(kind[:i], kind[i+1:])
		return k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	expander := restmapper.NewShortcutExpander(k.mapper, k.disc, nil)
	gvr, gr := schema.ParseResourceArg(strings.ToLower(kind))
	var res schema.GroupVersionResource
	var err error
	if gvr != nil {
		res, err = expander.ResourceFor(*gvr)
	}
	if gvr == nil || err != nil {
		res, err = expander.ResourceFor(gr.WithVersion(""))
	}
	if err != nil {
		return nil, err
	}
	gvk, err := expander.KindFor(res)
	if err != nil {
		return nil, err
	}
	return k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
}

// ns is the namespace a namespaced resource is read in: the one given,
// else "default" (upstream's default); "" for cluster-scoped resources.
func ns(m *meta.RESTMapping, namespace string) string {
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		return ""
	}
	if namespace == "" {
		return "default"
	}
	return namespace
}

func (k *kube) client(m *meta.RESTMapping, namespace string) dynamic.ResourceInterface {
	if n := ns(m, namespace); n != "" {
		return k.dyn.Resource(m.Resource).Namespace(n)
	}
	return k.dyn.Resource(m.Resource)
}

// get reads one object.
func (k *kube) get(ctx context.Context, kind, name, namespace string) (*unstructured.Unstructured, *meta.RESTMapping, error) {
	m, err := k.mapping(kind)
	if err != nil {
		return nil, nil, err
	}
	o, err := k.client(m, namespace).Get(ctx, name, metav1.GetOptions{})
	return o, m, err
}

// list lists objects of a kind in a namespace, optionally by label.
func (k *kube) list(ctx context.Context, kind, namespace, selector string) ([]unstructured.Unstructured, *meta.RESTMapping, error) {
	m, err := k.mapping(kind)
	if err != nil {
		return nil, nil, err
	}
	l, err := k.client(m, namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, m, err
	}
	return l.Items, m, nil
}

// where names an object for messages: Kind/name in namespace.
func where(kind, name, namespace string) string {
	s := kind + "/" + name
	if namespace != "" {
		s += " in " + namespace
	}
	return s
}
