// Package operator runs a compiled katalog against a cluster: a
// controller-runtime manager with one controller per CRD version entry (its
// own informer, work queue and workers), reconciling custom resources into
// the child objects their katalog declares.
//
// Per entry that reconciles: the controller watches the custom resource and
// owns every child kind the entry declares, so a child changed or deleted
// behind Orkestra's back is reconciled at once. Children are rendered by
// operator/render (the code path `orkestra render` prints) and applied with
// per-kind drift comparison of the fields the katalog manages: a reconcile
// with nothing to change makes no write call. Entries that do not reconcile
// (another version of a CRD whose storage-version entry reconciles) only
// count their resources, with that entry's informer (see cache.go for what
// the caches hold).
package operator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/operator/external"
)

// Finalizer is put on custom resources whose entry declares onDelete
// children (or finalizers): it is removed once they ran.
const Finalizer = "orkestra.orkspace.io/finalizer"

// AnnotationJobs lists, on a custom resource, the Jobs already created for
// it (namespace/name, comma-separated): Jobs run once per custom resource
// and are not created again when they are gone (ttlSecondsAfterFinished).
const AnnotationJobs = "orkestra.orkspace.io/jobs"

// EventReporter is the reporting controller of the events Orkestra emits.
const EventReporter = "orkestra"

// Options configure an Operator.
type Options struct {
	// Log is the operator's logger.
	Log logr.Logger
	// Registry receives the reconcile metrics; nil means controller-runtime's
	// metrics.Registry (shared with the webhook's conversion metrics).
	Registry prometheus.Registerer
	// Now returns the current time (rotateAfter); nil means time.Now.
	Now func() time.Time
	// WrapClient, when set, wraps the client the reconcilers read and write
	// with (tests count the calls).
	WrapClient func(client.Client) client.Client
	// SkipControllerNameValidation allows several operators of one katalog
	// in one process (tests).
	SkipControllerNameValidation bool
	// RequeueOnDeleteJob is how often a custom resource being deleted is
	// checked while its onDelete Jobs run, or its children are deleted in
	// order (default 2s).
	RequeueOnDeleteJob time.Duration
	// DeletionWaveTimeout bounds how long an ordered deletion waits for one
	// wave of children to be gone before it goes on (default 5m).
	DeletionWaveTimeout time.Duration
	// WholeObjects counts the custom resources of entries that only watch
	// with informers of whole objects instead of their metadata, as the
	// runtime did before (benchmarks compare the two; see
	// ManagerOptions.WholeObjects).
	WholeObjects bool
	// AbsentCopySource, when set, makes a copy from another namespace
	// (fromNamespace, toNamespaces) whose source does not exist a skipped
	// child instead of a failed reconcile, and is told of each (entry,
	// custom resource, the child and why). `orkestra simulate` sets it: its
	// cluster holds only the spec's objects, and upstream's simulate skips
	// such copies.
	AbsentCopySource func(entry string, cr types.NamespacedName, note string)
	// External makes the katalog's external calls; nil: a client that
	// reaches no loopback or private address (external.New with no
	// Allow).
	External *external.Client
}

// Operator reconciles the entries of one plan. Build it with New, add it to a
// manager with SetupWithManager.
type Operator struct {
	plan *engine.Plan
	opts Options
	// external makes the external calls; bodySchemas check their bodies.
	external *external.Client
	// (by the declared schema: an external call's, or a remote cross
	// read's).
	bodySchemas map[*apiextensionsv1.JSONSchemaProps]*external.Schema
	entries     map[string]*entryController
	order       []*entryController
	gauges      *gaugeCollector
	synced      atomic.Bool
}

// New returns an operator for plan. A call's body schema the API server's
// validator cannot build makes New panic: the loader accepted it as
// structural, so that is a defect.
func New(plan *engine.Plan, opts Options) *Operator {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Registry == nil {
		opts.Registry = ctrlmetrics.Registry
	}
	if opts.RequeueOnDeleteJob <= 0 {
		opts.RequeueOnDeleteJob = 2 * time.Second
	}
	if opts.DeletionWaveTimeout <= 0 {
		opts.DeletionWaveTimeout = defaultDeletionWaveBound
	}
	o := &Operator{plan: plan, opts: opts, entries: map[string]*entryController{}, external: opts.External, bodySchemas: map[*apiextensionsv1.JSONSchemaProps]*external.Schema{}}
	if o.external == nil {
		o.external = external.New(external.Options{})
	}
	for _, e := range plan.Entries {
		for _, c := range e.External {
			o.addBodySchema(c.Source.JSONSchema, c.Source.Field)
		}
		for _, r := range e.Remote {
			o.addBodySchema(r.Source.Remote.JSONSchema, r.Source.Field)
		}
	}
	return o
}

// addBodySchema compiles a declared answer schema once (nil: none).
func (o *Operator) addBodySchema(props *apiextensionsv1.JSONSchemaProps, field string) {
	if props == nil {
		return
	}
	s, err := external.NewSchema(props)
	if err != nil {
		panic(fmt.Sprintf("%s: the body schema does not build a validator: %v", field, err))
	}
	o.bodySchemas[props] = s
}

// Ready reports whether every informer has synced.
func (o *Operator) Ready() error {
	if !o.synced.Load() {
		return errors.New("the operator's caches have not synced yet")
	}
	return nil
}

// Scheme returns a scheme holding the built-in kinds children can have.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// ManagerOptions configure NewManager.
type ManagerOptions struct {
	// Namespace restricts the watches to one namespace ("" watches all).
	Namespace string
	// LeaderElection makes only the elected replica reconcile.
	LeaderElection          bool
	LeaderElectionID        string
	LeaderElectionNamespace string
	// LeaseDuration, RenewDeadline and RetryPeriod tune leader election;
	// zero keeps controller-runtime's defaults (15s, 10s, 2s).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// HealthProbeBindAddress serves controller-runtime's /healthz and
	// /readyz; "" or "0" disables it (orkestra run serves them itself).
	HealthProbeBindAddress string
	// GracefulShutdownTimeout bounds how long reconciles may finish on stop.
	GracefulShutdownTimeout time.Duration
	Log                     logr.Logger
	// SkipControllerNameValidation, see Options.
	SkipControllerNameValidation bool
	// SyncPeriod is how often the informers replay their objects to the
	// controllers (every custom resource is reconciled again); zero keeps
	// controller-runtime's default (10 hours).
	SyncPeriod time.Duration
	// WholeObjects keeps objects whole in the caches, managedFields and the
	// last-applied annotation included, as the runtime did before it
	// trimmed them (benchmarks compare the two; see CacheOptions).
	WholeObjects bool
}

// NewManager returns a controller-runtime manager set up for plan: the
// built-in scheme, caches of child kinds restricted to objects carrying the
// managed label, unstructured objects read from the cache, controller-
// runtime's own metrics server off (the process serves /metrics from the same
// registry), and leader election as asked.
func NewManager(cfg *rest.Config, plan *engine.Plan, o ManagerOptions) (manager.Manager, error) {
	cacheOpts := CacheOptions(plan, o.Namespace)
	if o.SyncPeriod > 0 {
		cacheOpts.SyncPeriod = &o.SyncPeriod
	}
	if o.WholeObjects {
		cacheOpts = wholeObjects(cacheOpts)
	}
	probe := o.HealthProbeBindAddress
	if probe == "" {
		probe = "0"
	}
	shutdown := o.GracefulShutdownTimeout
	if shutdown == 0 {
		shutdown = 30 * time.Second
	}
	mo := manager.Options{
		Scheme:                        Scheme(),
		Cache:                         cacheOpts,
		Client:                        client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        probe,
		LeaderElection:                o.LeaderElection,
		LeaderElectionID:              o.LeaderElectionID,
		LeaderElectionNamespace:       o.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       &shutdown,
		Logger:                        o.Log,
	}
	if o.LeaseDuration > 0 {
		mo.LeaseDuration = &o.LeaseDuration
	}
	if o.RenewDeadline > 0 {
		mo.RenewDeadline = &o.RenewDeadline
	}
	if o.RetryPeriod > 0 {
		mo.RetryPeriod = &o.RetryPeriod
	}
	if o.SkipControllerNameValidation {
		t := true
		mo.Controller.SkipNameValidation = &t
	}
	return ctrl.NewManager(cfg, mo)
}

// childKind is a kind of child known before evaluation.
type childKind struct {
	gvk    schema.GroupVersionKind
	custom bool
}

// childKinds returns the kinds of an entry's children known before
// evaluation (engine.Resource.GVK), telling custom children (read as
// unstructured objects) apart.
func childKinds(e *engine.Entry) []childKind {
	var out []childKind
	seen := map[childKind]bool{}
	for _, h := range katalog.Hooks {
		for _, r := range e.Hooks[h] {
			if r.GVK == nil {
				continue
			}
			k := childKind{gvk: *r.GVK, custom: r.Kind.Open}
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// newObject returns an empty object of gvk: typed when the scheme knows it,
// else unstructured.
func newObject(s *runtime.Scheme, gvk schema.GroupVersionKind) (client.Object, error) {
	if s.Recognizes(gvk) {
		o, err := s.New(gvk)
		if err != nil {
			return nil, err
		}
		obj, ok := o.(client.Object)
		if !ok {
			return nil, fmt.Errorf("%s is not an object", gvk)
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		return obj, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// SetupWithManager registers one controller per enabled entry that
// reconciles, and an informer that counts resources for every other enabled
// entry.
func (o *Operator) SetupWithManager(mgr manager.Manager) error {
	m, gauges, err := metricsFor(o.opts.Registry)
	if err != nil {
		return fmt.Errorf("registering the reconcile metrics: %w", err)
	}
	o.gauges = gauges
	c := mgr.GetClient()
	if o.opts.WrapClient != nil {
		c = o.opts.WrapClient(c)
	}
	recorder := mgr.GetEventRecorder(EventReporter)
	if err := indexChildren(context.Background(), mgr, o.plan); err != nil {
		return err
	}
	whole := wholeKinds(o.plan)
	for _, e := range o.plan.Entries {
		if !e.Enabled {
			continue
		}
		ec := o.newEntryController(e, access{
			client:   c,
			reader:   mgr.GetAPIReader(),
			mapper:   mgr.GetRESTMapper(),
			scheme:   mgr.GetScheme(),
			recorder: recorder,
		}, m)
		o.entries[e.Name] = ec
		o.order = append(o.order, ec)
	}
	for _, ec := range o.order {
		if !o.opts.WholeObjects {
			ec.countOf = o.countingSibling(ec)
		}
		if err := ec.setup(mgr, whole[ec.entry.GVK] || o.opts.WholeObjects); err != nil {
			return fmt.Errorf("katalog entry %s: %w", ec.entry.Name, err)
		}
	}
	// Once every informer synced: ready (on every replica).
	return mgr.Add(&syncRunnable{op: o, cache: mgr.GetCache()})
}

// access is how an entry's reconciler reaches the cluster: client reads
// (from the manager's cache) and writes, reader reads from the API server.
type access struct {
	client   client.Client
	reader   client.Reader
	mapper   meta.RESTMapper
	scheme   *runtime.Scheme
	recorder events.EventRecorder
}

// newEntryController builds the controller of entry e over a, with its
// reconcile metrics when the entry reconciles.
func (o *Operator) newEntryController(e *engine.Entry, a access, m *metrics) *entryController {
	ec := &entryController{
		op:        o,
		entry:     e,
		client:    a.client,
		reader:    a.reader,
		mapper:    a.mapper,
		scheme:    a.scheme,
		recorder:  a.recorder,
		metrics:   m,
		log:       o.opts.Log.WithValues("crd", e.Name),
		readIndex: newReadIndex(),
	}
	if e.Reconciles {
		ec.total = map[string]prometheus.Counter{
			ResultSuccess: m.total.WithLabelValues(e.Name, ResultSuccess),
			ResultError:   m.total.WithLabelValues(e.Name, ResultError),
			ResultRequeue: m.total.WithLabelValues(e.Name, ResultRequeue),
		}
		ec.duration = m.duration.WithLabelValues(e.Name)
	}
	return ec
}

// syncRunnable marks the operator ready once the caches synced, and keeps
// the gauges registered while the manager runs.
type syncRunnable struct {
	op    *Operator
	cache cache.Cache
}

func (s *syncRunnable) NeedLeaderElection() bool { return false }

func (s *syncRunnable) Start(ctx context.Context) error {
	for _, e := range s.op.order {
		s.op.gauges.add(e)
	}
	defer func() {
		for _, e := range s.op.order {
			s.op.gauges.remove(e)
		}
	}()
	if s.cache.WaitForCacheSync(ctx) {
		s.op.synced.Store(true)
		for _, e := range s.op.order {
			e.informerSynced.Store(true)
			if !e.entry.Reconciles {
				e.health.started(time.Now())
			}
		}
	}
	<-ctx.Done()
	return nil
}

// startedRunnable marks an entry's workers started; it runs on the leader
// only, like the controllers.
type startedRunnable struct {
	e     *entryController
	cache cache.Cache
}

func (s *startedRunnable) Start(ctx context.Context) error {
	if s.cache.WaitForCacheSync(ctx) {
		s.e.workersStarted.Store(true)
		s.e.health.started(time.Now())
	}
	<-ctx.Done()
	s.e.workersStarted.Store(false)
	return nil
}

// entryController runs one katalog entry.
type entryController struct {
	op       *Operator
	entry    *engine.Entry
	client   client.Client
	reader   client.Reader
	mapper   meta.RESTMapper
	scheme   *runtime.Scheme
	recorder events.EventRecorder
	metrics  *metrics
	total    map[string]prometheus.Counter
	duration prometheus.Observer
	log      logr.Logger

	// foreign holds onCreate children whose name another object holds.
	foreign sync.Map
	queueMu sync.Mutex
	queue   workqueue.TypedRateLimitingInterface[reconcile.Request]

	active    atomic.Int64
	resources atomic.Int64
	// countOf, for an entry that only counts, is the entry reconciling the
	// same CRD in the same namespaces: every version of a CRD lists the same
	// objects, so its informer's count is this entry's too.
	countOf *entryController
	// views converts observed children for read-back once per change.
	views childViews
	// readIndex maps the objects cross reads read to their readers.
	readIndex *readIndex
	// sentinels holds the sentinels of the changes not yet reconciled.
	sentinels sentinelLedger
	// scopes remembers the REST mapper's scope of each kind (isNamespaced).
	scopes sync.Map
	// consecutiveFailures counts the reconciles that failed since the last
	// one that did not (dependsOn's healthy).
	consecutiveFailures atomic.Int64
	informerSynced      atomic.Bool
	workersStarted      atomic.Bool
	recentMu            sync.Mutex
	recent              [32]bool // true: failed
	recentN             int
	health              entryHealth
}

func (e *entryController) crObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(e.entry.GVK)
	return u
}

// count is how many custom resources the entry's informer (or that of the
// entry it counts with) holds.
func (e *entryController) count() int64 {
	if e.countOf != nil {
		return e.countOf.resources.Load()
	}
	return e.resources.Load()
}

// countingSibling returns the entry whose informer counts e's custom
// resources: for an entry that only watches, the one that reconciles the
// same CRD when both watch the same namespaces; nil when there is none.
func (o *Operator) countingSibling(e *entryController) *entryController {
	if e.entry.Reconciles {
		return nil
	}
	for _, s := range o.order {
		if s.entry.Reconciles && s.entry.GVK.GroupKind() == e.entry.GVK.GroupKind() &&
			slices.Equal(o.plan.WatchNamespaces(s.entry.GVK), o.plan.WatchNamespaces(e.entry.GVK)) {
			return s
		}
	}
	return nil
}

// setup registers the entry's controller; for an entry that only watches,
// its counting informer (of metadata only unless whole), or nothing when
// another entry's informer counts for it.
func (e *entryController) setup(mgr manager.Manager, whole bool) error {
	if e.countOf != nil {
		return nil
	}
	var watched client.Object = e.crObject()
	if !whole {
		watched = metadataObject(e.entry.GVK)
	}
	inf, err := mgr.GetCache().GetInformer(context.Background(), watched)
	if err != nil {
		return fmt.Errorf("informer for %s: %w", e.entry.GVK, err)
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { e.resources.Add(1) },
		DeleteFunc: func(any) { e.resources.Add(-1) },
	}); err != nil {
		return err
	}
	if !e.entry.Reconciles {
		return nil
	}
	var forOpts []builder.ForOption
	if e.entry.Namespaces != nil || e.entry.EnqueueGate != nil || e.entry.QueueDrop != nil || len(e.entry.Sentinels) > 0 || len(e.entry.EnqueueGateSentinels) > 0 {
		// Custom resources outside the entry's namespaces, kept out by
		// preReconcile's enqueue gate, or dropped by queue.behaviour, never
		// reach the work queue (upstream drops them before enqueueing too);
		// sentinels are computed here.
		forOpts = append(forOpts, builder.WithPredicates(e.admission()))
	}
	b := builder.ControllerManagedBy(mgr).
		Named(e.entry.Name).
		For(e.crObject(), forOpts...)
	for _, k := range childKinds(e.entry) {
		gvk := k.gvk
		obj, err := newObject(mgr.GetScheme(), gvk)
		if err != nil {
			return err
		}
		if k.custom {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			obj = u
			// A custom kind the API server may not serve (yet): watching
			// it would keep the controller from starting.
			if _, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
				e.log.Info("not watching custom child kind: the API server does not serve it; changes to such children are corrected on the next reconcile", "kind", gvk.String(), "error", err.Error())
				continue
			}
		}
		b = b.Owns(obj)
	}
	if b, err = e.watchObserved(mgr, b); err != nil {
		return err
	}
	b = e.watchPods(b)
	opts := controller.Options{
		MaxConcurrentReconciles: e.workers(),
		NewQueue: func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
			q := priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) {
				o.Log = e.log
				o.RateLimiter = rl
			})
			e.queueMu.Lock()
			e.queue = q
			e.queueMu.Unlock()
			return q
		},
	}
	if e.op.opts.SkipControllerNameValidation {
		t := true
		opts.SkipNameValidation = &t
	}
	if err := b.WithOptions(opts).Complete(e); err != nil {
		return err
	}
	return mgr.Add(&startedRunnable{e: e, cache: mgr.GetCache()})
}
