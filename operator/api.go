package operator

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Reads for the runtime's HTTP API (/katalog/{entry}/cr): an entry's custom
// resources, their children and events. The custom resources and children
// come from the operator's caches, as upstream's handlers read its
// informers; events from the API server (nothing caches them).

// ErrUnknownEntry is returned for an entry the operator runs nothing for.
var ErrUnknownEntry = errors.New("the operator runs no such katalog entry")

func (o *Operator) entry(name string) (*entryController, error) {
	e, ok := o.entries[name]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownEntry, name)
	}
	return e, nil
}

// reader reads an entry's custom resources: the cache for the entry that
// reconciles them, the API server for one that only watches (its informer
// may hold metadata only).
func (e *entryController) crReader() client.Reader {
	if e.entry.Reconciles {
		return e.client
	}
	return e.reader
}

// CustomResources lists the custom resources of the entry named entry, at
// its version.
func (o *Operator) CustomResources(ctx context.Context, entry string) ([]unstructured.Unstructured, error) {
	e, err := o.entry(entry)
	if err != nil {
		return nil, err
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(e.entry.GVK.GroupVersion().WithKind(e.entry.GVK.Kind + "List"))
	if err := e.crReader().List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing %s: %w", e.entry.GVR.Resource, err)
	}
	return list.Items, nil
}

// CustomResource returns one custom resource of the entry; nil when there
// is none of that name.
func (o *Operator) CustomResource(ctx context.Context, entry, namespace, name string) (*unstructured.Unstructured, error) {
	e, err := o.entry(entry)
	if err != nil {
		return nil, err
	}
	cr := e.crObject()
	if err := e.crReader().Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, cr); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return cr, nil
}

// Children returns the objects cr owns among the kinds its katalog entry
// creates (those of the entry that reconciles cr's CRD), each a copy.
func (o *Operator) Children(ctx context.Context, entry string, cr *unstructured.Unstructured) ([]unstructured.Unstructured, error) {
	e, err := o.entry(entry)
	if err != nil {
		return nil, err
	}
	if !e.entry.Reconciles {
		if e = o.reconcilerOf(e); e == nil {
			return nil, nil
		}
	}
	var out []unstructured.Unstructured
	for _, k := range childKinds(e.entry) {
		objs, err := e.ownedObjects(ctx, cr, k)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				out = append(out, *u.DeepCopy())
				continue
			}
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
			if err != nil {
				return nil, err
			}
			u := unstructured.Unstructured{Object: m}
			u.SetGroupVersionKind(k.gvk)
			out = append(out, u)
		}
	}
	return out, nil
}

// reconcilerOf returns the entry that reconciles the CRD of e; nil when
// none runs.
func (o *Operator) reconcilerOf(e *entryController) *entryController {
	for _, s := range o.order {
		if s.entry.Reconciles && s.entry.GVK.GroupKind() == e.entry.GVK.GroupKind() {
			return s
		}
	}
	return nil
}

// Events lists the events whose involved object is the custom resource
// namespace/name of the entry.
func (o *Operator) Events(ctx context.Context, entry, namespace, name string) ([]corev1.Event, error) {
	e, err := o.entry(entry)
	if err != nil {
		return nil, err
	}
	var list corev1.EventList
	opts := []client.ListOption{client.MatchingFields{"involvedObject.name": name, "involvedObject.kind": e.entry.GVK.Kind}}
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := e.reader.List(ctx, &list, opts...); err != nil {
		return nil, fmt.Errorf("listing the events of %s %s: %w", e.entry.GVK.Kind, name, err)
	}
	return list.Items, nil
}
