package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/orkspace/orkestra-cel/katalog"
)

// clusterCRDs reads CustomResourceDefinitions from a cluster for entries that
// name no crdFile. The list is read once, on the first entry that needs it,
// so a katalog whose entries all have crdFile never contacts the cluster.
type clusterCRDs struct {
	config func() (*rest.Config, error)
	once   sync.Once
	byGK   map[schema.GroupKind]*apiextensionsv1.CustomResourceDefinition
	err    error
}

func (c *clusterCRDs) fetch(gk schema.GroupKind) (*apiextensionsv1.CustomResourceDefinition, error) {
	c.once.Do(func() { c.byGK, c.err = c.list() })
	if c.err != nil {
		return nil, c.err
	}
	crd, ok := c.byGK[gk]
	if !ok {
		return nil, katalog.ErrCRDNotFound
	}
	return crd, nil
}

func (c *clusterCRDs) list() (map[schema.GroupKind]*apiextensionsv1.CustomResourceDefinition, error) {
	cfg, err := c.config()
	if err != nil {
		return nil, err
	}
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster for CRDs: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := client.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the cluster's CRDs (the entry has no crdFile): %w", err)
	}
	out := make(map[schema.GroupKind]*apiextensionsv1.CustomResourceDefinition, len(list.Items))
	for i := range list.Items {
		crd := &list.Items[i]
		out[schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}] = crd
	}
	return out, nil
}
