package operator

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/orkspace/orkestra-cel/operator/render"
)

// Direct runs the reconcilers of an operator's entries without a manager:
// no informers, no work queues, no leader election — the caller decides
// when which custom resource is reconciled (`orkestra simulate` runs
// cycles). The reconcilers are the controllers' own; only how they reach
// the cluster differs.
type Direct struct {
	op *Operator
	// seen holds, per custom resource of an entry declaring sentinels, the
	// metadata of the version its last reconcile saw: without informer
	// events, a change is told from it (sentinels).
	seenMu sync.Mutex
	seen   map[string]metav1.Object
}

// DirectOptions say how the reconcilers reach the cluster.
type DirectOptions struct {
	// Client reads and writes. It need not read from a cache: the children
	// a reconciler lists through the cache's owner index are listed by the
	// label that index is built from.
	Client client.Client
	// Reader reads what the manager reads uncached (default: Client).
	Reader client.Reader
	// Mapper says which kinds the cluster serves and their scope.
	Mapper meta.RESTMapper
	// Scheme knows the built-in kinds (default: Scheme()).
	Scheme *runtime.Scheme
	// Recorder receives the events (default: dropped).
	Recorder events.EventRecorder
}

// Direct returns the operator's reconcilers over d, once per Operator.
// Every enabled entry
// counts as started (dependsOn), as it would once its controller runs.
// Options.Registry receives the reconcile metrics: give each Direct of a
// process its own.
func (o *Operator) Direct(d DirectOptions) (*Direct, error) {
	if len(o.order) > 0 {
		return nil, errors.New("the operator's entries are set up already (SetupWithManager or Direct): build another Operator")
	}
	m, _, err := metricsFor(o.opts.Registry)
	if err != nil {
		return nil, fmt.Errorf("registering the reconcile metrics: %w", err)
	}
	c := d.Client
	if o.opts.WrapClient != nil {
		c = o.opts.WrapClient(c)
	}
	a := access{client: ownerIndexByLabel{c}, reader: d.Reader, mapper: d.Mapper, scheme: d.Scheme, recorder: d.Recorder}
	if a.reader == nil {
		a.reader = a.client
	}
	if a.scheme == nil {
		a.scheme = Scheme()
	}
	if a.recorder == nil {
		a.recorder = &events.FakeRecorder{}
	}
	for _, e := range o.plan.Entries {
		if !e.Enabled {
			continue
		}
		ec := o.newEntryController(e, a, m)
		ec.informerSynced.Store(true)
		ec.workersStarted.Store(true)
		ec.health.started(o.opts.Now())
		o.entries[e.Name] = ec
		o.order = append(o.order, ec)
	}
	o.synced.Store(true)
	return &Direct{op: o}, nil
}

// Reconcile reconciles the custom resource key of the entry named entry
// once, as its controller's worker would.
func (d *Direct) Reconcile(ctx context.Context, entry string, key types.NamespacedName) (reconcile.Result, error) {
	e, ok := d.op.entries[entry]
	if !ok || !e.entry.Reconciles {
		return reconcile.Result{}, fmt.Errorf("katalog entry %s does not reconcile here (unknown, disabled, or not the storage version)", entry)
	}
	if len(e.entry.Sentinels) > 0 && !d.admit(ctx, e, key) {
		return reconcile.Result{}, nil
	}
	return e.Reconcile(ctx, reconcile.Request{NamespacedName: key})
}

// admit does for a Direct reconcile what the informer's admission does: the
// sentinels of the change since the version the last reconcile saw (none
// seen: an empty object), and preReconcile's enqueue gate over them; false
// when the gate drops the change.
func (d *Direct) admit(ctx context.Context, e *entryController, key types.NamespacedName) bool {
	cr := e.crObject()
	if err := e.client.Get(ctx, key, cr); err != nil {
		return true // the reconcile reports it, or finds it gone
	}
	id := e.entry.Name + "/" + key.String()
	d.seenMu.Lock()
	if d.seen == nil {
		d.seen = map[string]metav1.Object{}
	}
	old := d.seen[id]
	d.seen[id] = &unstructured.Unstructured{Object: map[string]any{"metadata": runtime.DeepCopyJSONValue(cr.Object["metadata"])}}
	d.seenMu.Unlock()
	vals := computeSentinels(e.entry.Sentinels, old, cr)
	if !e.enqueues(cr, vals) {
		return false
	}
	e.sentinels.add(key, vals)
	return true
}

// ownerIndexByLabel serves the cache's owner index (ownerIndex) from a
// client that reads the API server, or a fake, directly: the index holds
// the orkestra-owner label's value, so a label selector finds the same
// objects.
type ownerIndexByLabel struct {
	client.Client
}

func (c ownerIndexByLabel) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lo := &client.ListOptions{}
	lo.ApplyOptions(opts)
	if lo.FieldSelector == nil {
		return c.Client.List(ctx, list, opts...)
	}
	owner, ok := lo.FieldSelector.RequiresExactMatch(ownerIndex)
	if !ok {
		return c.Client.List(ctx, list, opts...)
	}
	sel := labels.Set{render.LabelOwner: owner}.AsSelector()
	if lo.LabelSelector != nil {
		reqs, _ := lo.LabelSelector.Requirements()
		sel = sel.Add(reqs...)
	}
	lo.FieldSelector, lo.LabelSelector = nil, sel
	return c.Client.List(ctx, list, lo)
}
