package e2e

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/orkestra-cel/readiness"
)

// checkResource asserts a resources: entry (upstream's checkResource in
// pkg/e2e/verify.go): a named object exists (and is ready), or objects of
// the kind exist (count of them, the first ready); count: 0 holds when
// nothing matches — a kind the cluster does not serve (its CRD deleted)
// included.
func (k *kube) checkResource(ctx context.Context, c *ResourceCheck) error {
	var objs []unstructured.Unstructured
	var err error
	if c.Name != "" {
		var o *unstructured.Unstructured
		if o, _, err = k.get(ctx, c.Kind, c.Name, c.Namespace); err == nil {
			objs = append(objs, *o)
		} else if apierrors.IsNotFound(err) {
			err = nil
		}
	} else {
		objs, _, err = k.list(ctx, c.Kind, c.Namespace, "")
	}
	what := c.Kind
	if c.Name != "" {
		what = c.Kind + "/" + c.Name
	}
	if c.Namespace != "" {
		what += " in " + c.Namespace
	}
	if c.Count != nil && *c.Count == 0 {
		if err != nil && (strings.Contains(err.Error(), "serves no kind") || apierrors.IsNotFound(err)) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(objs) > 0 {
			return fmt.Errorf("%s: want none, %d still exist (%s)", what, len(objs), names(objs))
		}
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case len(objs) == 0:
		return fmt.Errorf("%s: not found", what)
	case c.Count != nil && len(objs) != *c.Count:
		return fmt.Errorf("%s: want %d, found %d (%s)", what, *c.Count, len(objs), names(objs))
	}
	if c.Ready {
		if ok, why := readiness.Of(&objs[0]); !ok {
			return fmt.Errorf("%s/%s: not ready: %s", objs[0].GetKind(), objs[0].GetName(), why)
		}
	}
	return nil
}

func names(objs []unstructured.Unstructured) string {
	var n []string
	for _, o := range objs {
		n = append(n, o.GetName())
	}
	return strings.Join(n, ", ")
}
