package workloads

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Step gives every object of the simulated kinds the client lists (opts
// restrict the lists, e.g. client.InNamespace) its simulated status as of
// now, writing only those whose status changes. It returns how many it
// wrote.
func Step(ctx context.Context, c client.Client, now time.Time, opts ...client.ListOption) (int, error) {
	s := newSimulation(now)
	n := 0
	for _, k := range kinds {
		list := k.newList()
		if err := c.List(ctx, list, opts...); err != nil {
			return n, fmt.Errorf("listing %s: %w", k.name, err)
		}
		for _, obj := range k.items(list) {
			wrote, err := write(ctx, c, k, obj, s)
			if err != nil {
				return n, err
			}
			if wrote {
				n++
			}
		}
	}
	return n, nil
}

// Advance gives obj, an object of a simulated kind as last read, its
// simulated status as of now, writing it when it changes; it reports whether
// it wrote. Objects of other kinds are left alone.
func Advance(ctx context.Context, c client.Client, obj client.Object, now time.Time) (bool, error) {
	k, ok := kindOf(obj)
	if !ok {
		return false, nil
	}
	return write(ctx, c, k, obj, newSimulation(now))
}

// write sets obj's simulated status and writes it through the status
// subresource when it changed. An object being deleted is left alone.
func write(ctx context.Context, c client.Client, k kind, obj client.Object, s simulation) (bool, error) {
	if obj.GetDeletionTimestamp() != nil || !k.advance(obj, s) {
		return false, nil
	}
	if err := c.Status().Update(ctx, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil // deleted meanwhile
		}
		return false, fmt.Errorf("writing the simulated status of %s %s/%s: %w", k.name, obj.GetNamespace(), obj.GetName(), err)
	}
	return true, nil
}
