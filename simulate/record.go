package simulate

import (
	"context"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// Op is one client call a reconcile made.
type Op struct {
	Cycle int
	// Entry is the katalog entry whose reconcile made the call.
	Entry string
	// Verb is get, list, create, update, patch, apply (a server-side
	// apply) or delete.
	Verb string
	// Resource is the kind's plural (deployments); Subresource "status"
	// for a status write.
	Resource    string
	Subresource string
	Namespace   string
	Name        string
	// Created: the call brought the object into existence (a create, or an
	// apply of an object that did not exist).
	Created bool
	// Failed: the call returned an error (a write that did not happen, a
	// get that found nothing).
	Failed bool
}

// write reports an op that changes the cluster (shown in the output).
func (o Op) write() bool {
	return !o.Failed && o.Verb != "get" && o.Verb != "list"
}

// path is resource/name, with /status for a status write.
func (o Op) path() string {
	p := o.Resource
	if o.Name != "" {
		p += "/" + o.Name
	}
	if o.Subresource != "" {
		p += "/" + o.Subresource
	}
	return p
}

// recorder records the calls made through the clients it wraps, tagged
// with the cycle and entry being reconciled.
type recorder struct {
	scheme *runtime.Scheme
	mapper meta.RESTMapper
	// base is the unrecorded client (existence checks of applies).
	base client.Client

	mu    sync.Mutex
	cycle int
	entry string
	ops   []Op
}

// at sets the cycle and entry the next calls belong to.
func (r *recorder) at(cycle int, entry string) {
	r.mu.Lock()
	r.cycle, r.entry = cycle, entry
	r.mu.Unlock()
}

// take returns the ops recorded since the last take.
func (r *recorder) take() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.ops
	r.ops = nil
	return out
}

func (r *recorder) add(op Op, err error) {
	op.Failed = err != nil
	if op.Verb == "create" {
		op.Created = err == nil
	}
	r.mu.Lock()
	op.Cycle, op.Entry = r.cycle, r.entry
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

// resource is the plural of gvk ("" when the cluster does not serve it).
func (r *recorder) resource(gvk schema.GroupVersionKind) string {
	m, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return strings.ToLower(gvk.Kind)
	}
	return m.Resource.Resource
}

func (r *recorder) of(verb string, obj client.Object) Op {
	gvk, _ := apiutil.GVKForObject(obj, r.scheme)
	return Op{Verb: verb, Resource: r.resource(gvk), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// wrap returns c recording every call.
func (r *recorder) wrap(c client.WithWatch) client.WithWatch {
	return interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			err := c.Get(ctx, key, obj, opts...)
			op := r.of("get", obj)
			op.Namespace, op.Name = key.Namespace, key.Name
			r.add(op, err)
			return err
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			err := c.List(ctx, list, opts...)
			gvk, _ := apiutil.GVKForObject(list, r.scheme)
			gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
			lo := (&client.ListOptions{}).ApplyOptions(opts)
			r.add(Op{Verb: "list", Resource: r.resource(gvk), Namespace: lo.Namespace}, err)
			return err
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			err := c.Create(ctx, obj, opts...)
			r.add(r.of("create", obj), err)
			return err
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			err := c.Update(ctx, obj, opts...)
			r.add(r.of("update", obj), err)
			return err
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			op := r.of("patch", obj)
			if patch.Type() == types.ApplyPatchType {
				op.Verb, op.Created = "apply", !r.exists(ctx, obj)
			}
			err := c.Patch(ctx, obj, patch, opts...)
			op.Created = op.Created && err == nil
			r.add(op, err)
			return err
		},
		Apply: func(ctx context.Context, c client.WithWatch, cfg runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			op := Op{Verb: "apply"}
			if u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cfg); err == nil {
				obj := &unstructured.Unstructured{Object: u}
				op = r.of("apply", obj)
				op.Created = !r.exists(ctx, obj)
			}
			err := c.Apply(ctx, cfg, opts...)
			op.Created = op.Created && err == nil
			r.add(op, err)
			return err
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			err := c.Delete(ctx, obj, opts...)
			r.add(r.of("delete", obj), err)
			return err
		},
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			err := c.DeleteAllOf(ctx, obj, opts...)
			r.add(r.of("delete", obj), err)
			return err
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			err := c.SubResource(sub).Update(ctx, obj, opts...)
			op := r.of("update", obj)
			op.Subresource = sub
			r.add(op, err)
			return err
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			err := c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			op := r.of("patch", obj)
			if patch.Type() == types.ApplyPatchType {
				op.Verb = "apply"
			}
			op.Subresource = sub
			r.add(op, err)
			return err
		},
	})
}

// exists reports whether obj exists, read without recording.
func (r *recorder) exists(ctx context.Context, obj client.Object) bool {
	gvk, err := apiutil.GVKForObject(obj, r.scheme)
	if err != nil {
		return false
	}
	probe := &unstructured.Unstructured{}
	probe.SetGroupVersionKind(gvk)
	err = r.base.Get(ctx, client.ObjectKeyFromObject(obj), probe)
	return err == nil || !apierrors.IsNotFound(err)
}
