package controlplane

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Apply server-side-applies objects as FieldManager, creating their
// namespaces, and returns a name ("Kind ns/name") for each.
func Apply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) ([]string, error) {
	var applied []string
	for _, o := range objs {
		if ns := o.GetNamespace(); ns != "" {
			err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return nil, fmt.Errorf("creating namespace %s: %w", ns, err)
			}
		}
		// The first custom resources after a CRD is established may meet
		// a discovery cache that does not know it yet: retry briefly.
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
			err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner(FieldManager), client.ForceOwnership)
			if err == nil {
				return true, nil
			}
			if IsNoMatch(err) {
				return false, nil
			}
			return false, err
		})
		if err != nil {
			return nil, fmt.Errorf("applying %s: %w", Describe(o), err)
		}
		applied = append(applied, Describe(o))
	}
	return applied, nil
}

// Describe names an object as "Kind ns/name" (or "Kind name").
func Describe(o *unstructured.Unstructured) string {
	if o.GetNamespace() != "" {
		return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
	}
	return o.GetKind() + " " + o.GetName()
}

// IsNoMatch reports an error of a kind the API server (or the client's
// discovery cache) does not know yet.
func IsNoMatch(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "no matches for kind") || apierrors.IsNotFound(err))
}
