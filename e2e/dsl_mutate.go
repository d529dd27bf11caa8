package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/controlplane"
	"github.com/orkspace/orkestra-cel/objfile"
	"github.com/orkspace/orkestra-cel/readiness"
)

// applyObjects server-side-applies objs (a namespace override for those
// without one) and returns kubectl apply's report of each and its exit
// code: 1 with the server's message when the API server refuses one.
func (k *kube) applyObjects(ctx context.Context, objs []*unstructured.Unstructured, namespace string) (string, int) {
	var out []string
	for _, o := range objs {
		m, err := k.mapping(o.GetAPIVersion() + "/" + o.GetKind())
		if err == nil {
			if namespace != "" && o.GetNamespace() == "" && ns(m, "x") != "" {
				o.SetNamespace(namespace)
			}
			err = k.applyOne(ctx, o)
		}
		if err != nil {
			out = append(out, fmt.Sprintf("Error from server: error when applying %s: %v", controlplane.Describe(o), err))
			return strings.Join(out, "\n"), 1
		}
		out = append(out, fmt.Sprintf("%s/%s serverside-applied", strings.ToLower(o.GetKind()), o.GetName()))
	}
	return strings.Join(out, "\n"), 0
}

func (k *kube) applyOne(ctx context.Context, o *unstructured.Unstructured) error {
	m, err := k.mapping(o.GetAPIVersion() + "/" + o.GetKind())
	if err != nil {
		return err
	}
	data, err := o.MarshalJSON()
	if err != nil {
		return err
	}
	force := true
	_, err = k.client(m, o.GetNamespace()).Patch(ctx, o.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: controlplane.FieldManager, Force: &force})
	return err
}

// apply is kubectl.apply: a file or an inline manifest; its exit code and
// output are asserted as a command's.
func (k *kube) apply(ctx context.Context, a *KApply, dir string) error {
	var objs []*unstructured.Unstructured
	var err error
	if a.File != "" {
		objs, err = objfile.Read([]string{a.File}, nil)
	} else {
		objs, err = objfile.Read(nil, strings.NewReader(a.Inline))
	}
	if err != nil {
		return fmt.Errorf("the manifest: %w", err)
	}
	out, code := k.applyObjects(ctx, objs, a.Namespace)
	if code != a.ExitCode {
		return fmt.Errorf("exit code %d, want %d\noutput: %s", code, a.ExitCode, out)
	}
	if err := a.Assert.Check(out); err != nil {
		return fmt.Errorf("%w\noutput: %s", err, out)
	}
	return nil
}

// delete is kubectl.delete: the objects of a file, one object, or a Lease
// holder's pod; like kubectl it waits (here up to 30s) for them to be gone.
func (k *kube) delete(ctx context.Context, d *KDelete) error {
	var targets []Target
	switch {
	case d.File != "":
		objs, err := objfile.Read([]string{d.File}, nil)
		if err != nil {
			return err
		}
		for _, o := range objs {
			targets = append(targets, Target{Kind: o.GetAPIVersion() + "/" + o.GetKind(), Name: o.GetName(), Namespace: o.GetNamespace()})
		}
	case d.Target.Lease != nil:
		pod, podNS, err := k.leaseHolder(ctx, d.Target.Lease, d.Target.Namespace)
		if err != nil {
			return err
		}
		targets = append(targets, Target{Kind: "Pod", Name: pod, Namespace: podNS})
	default:
		targets = append(targets, d.Target)
	}
	for _, t := range targets {
		if err := k.deleteOne(ctx, t, d.IgnoreNotFound); err != nil {
			return err
		}
	}
	return nil
}

func (k *kube) deleteOne(ctx context.Context, t Target, ignoreNotFound bool) error {
	m, err := k.mapping(t.Kind)
	if err != nil {
		if ignoreNotFound {
			return nil
		}
		return err
	}
	c := k.client(m, t.Namespace)
	obj, err := c.Get(ctx, t.Name, metav1.GetOptions{})
	if err == nil {
		bg, uid := metav1.DeletePropagationBackground, obj.GetUID()
		err = c.Delete(ctx, t.Name, metav1.DeleteOptions{PropagationPolicy: &bg, Preconditions: &metav1.Preconditions{UID: &uid}})
	}
	switch {
	case apierrors.IsNotFound(err) && ignoreNotFound:
		return nil
	case err != nil:
		return fmt.Errorf("deleting %s: %w", where(m.GroupVersionKind.Kind, t.Name, ns(m, t.Namespace)), err)
	}
	// Gone means this object: one created again under the name is another.
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		o, err := c.Get(ctx, t.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err) || err == nil && o.GetUID() != obj.GetUID(), nil
	})
	return nil
}

// patch is kubectl.patch: merge (default), strategic or json, the patch
// written as JSON or YAML.
func (k *kube) patch(ctx context.Context, p *KPatch) error {
	m, err := k.mapping(p.Target.Kind)
	if err != nil {
		return err
	}
	data, err := sigsyaml.YAMLToJSON([]byte(p.Patch))
	if err != nil {
		return fmt.Errorf("the patch is neither JSON nor YAML: %w", err)
	}
	pt := map[string]types.PatchType{"": types.MergePatchType, "merge": types.MergePatchType, "strategic": types.StrategicMergePatchType, "json": types.JSONPatchType}[p.Type]
	_, err = k.client(m, p.Target.Namespace).Patch(ctx, p.Target.Name, pt, data, metav1.PatchOptions{FieldManager: controlplane.FieldManager})
	if err != nil {
		return fmt.Errorf("patching %s: %w", where(m.GroupVersionKind.Kind, p.Target.Name, ns(m, p.Target.Namespace)), err)
	}
	return nil
}

// rollout is kubectl.restart (the pod template's restartedAt annotation,
// as `kubectl rollout restart`) or kubectl.scale (spec.replicas); with
// Ready it waits until the workload has rolled out and is ready.
func (k *kube) rollout(ctx context.Context, r *KRollout) error {
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":%q}}}}}`, time.Now().Format(time.RFC3339))
	if r.Replicas != nil {
		patch = fmt.Sprintf(`{"spec":{"replicas":%d}}`, *r.Replicas)
	}
	if err := k.patch(ctx, &KPatch{Target: r.Target, Patch: patch}); err != nil {
		return err
	}
	if !r.Ready {
		return nil
	}
	var last string
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		o, _, err := k.get(ctx, r.Target.Kind, r.Target.Name, r.Target.Namespace)
		if err != nil {
			return false, err
		}
		if g, _, _ := unstructured.NestedInt64(o.Object, "status", "observedGeneration"); g < o.GetGeneration() {
			last = fmt.Sprintf("generation %d not observed yet (%d)", o.GetGeneration(), g)
			return false, nil
		}
		ok, why := readiness.Of(o)
		last = why
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("%s did not roll out: %s", r.Target.Name, last)
	}
	return nil
}
