package workloads

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// DefaultDelay is how long after its creation an object gets its simulated
// status in live mode: long enough that a reconcile sees the object before
// it is ready, as on a real cluster.
const DefaultDelay = time.Second

// Options configure the live simulation.
type Options struct {
	// Delay after an object's creation before it gets its simulated status
	// (default DefaultDelay; negative: at once).
	Delay time.Duration
	// Now returns the current time (default time.Now).
	Now func() time.Time
}

// Setup adds to mgr one controller per simulated kind that gives every
// object its manager's cache holds its simulated status, Delay after the
// object was created, and again whenever the object changes (a Deployment
// scaled). Like every controller, they run on the elected leader only.
func Setup(mgr manager.Manager, o Options) error {
	if o.Delay == 0 {
		o.Delay = DefaultDelay
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	// Several managers in one process (tests, e2e runs) each add these
	// controllers: their names need not be unique.
	skip := true
	for _, k := range kinds {
		r := &reconciler{c: mgr.GetClient(), k: k, o: o}
		err := builder.ControllerManagedBy(mgr).
			Named("simulated-" + k.name).
			For(k.newObj()).
			WithOptions(controller.Options{SkipNameValidation: &skip}).
			Complete(r)
		if err != nil {
			return err
		}
	}
	return nil
}

// reconciler simulates the status of one kind.
type reconciler struct {
	c client.Client
	k kind
	o Options
}

func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	obj := r.k.newObj()
	if err := r.c.Get(ctx, req.NamespacedName, obj); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	now := r.o.Now()
	if due := obj.GetCreationTimestamp().Add(r.o.Delay); now.Before(due) {
		return reconcile.Result{RequeueAfter: due.Sub(now)}, nil
	}
	if _, err := write(ctx, r.c, r.k, obj, newSimulation(now)); err != nil {
		if apierrors.IsConflict(err) {
			// Changed since the cache saw it: the change brings it back.
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, nil
}
