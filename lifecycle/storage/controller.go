package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
)

// Event reasons the Controller records on a CRD.
const (
	ReasonStarted   = "StorageMigrationStarted"
	ReasonSucceeded = "StorageMigrationSucceeded"
	ReasonFailed    = "StorageMigrationFailed"
)

// Status is a CRD's storage state as the Controller knows it (the
// `storage` object of /katalog/{crd}).
type Status struct {
	StoredVersions []string
	Migrating      bool
	// Migrated counts the objects the current (or last) run rewrote;
	// Remaining those still to do, -1 when unknown.
	Migrated  int64
	Remaining int64
	LastError string
}

// ControllerOptions configure a Controller.
type ControllerOptions struct {
	// CRDs are the names of the CRDs to keep migrated.
	CRDs []string
	// Migrator configures the runs; its Progress is the Controller's.
	Migrator Options
	// Registry receives the metrics (nil: none are registered).
	Registry prometheus.Registerer
	// Recorder, when set, records events on the CRDs.
	Recorder events.EventRecorder
	// Resync is how often every CRD is looked at again (default 10m).
	Resync time.Duration
	Log    logr.Logger
}

// Controller keeps the CRDs it is given migrated: whenever one's
// status.storedVersions lists a version other than its storage version, it
// runs a migration, one CRD at a time, retrying failures with backoff. It
// is a controller-runtime Runnable that needs leader election.
type Controller struct {
	opts    ControllerOptions
	cfg     *rest.Config
	m       *Migrator
	metrics *metrics
	queue   workqueue.TypedRateLimitingInterface[string]

	mu     sync.Mutex
	status map[string]*Status
	uids   map[string]types.UID
}

// NewController returns a Controller for opts.CRDs.
func NewController(cfg *rest.Config, opts ControllerOptions) (*Controller, error) {
	if opts.Resync <= 0 {
		opts.Resync = 10 * time.Minute
	}
	c := &Controller{opts: opts, cfg: cfg, status: map[string]*Status{}, uids: map[string]types.UID{}}
	for _, n := range opts.CRDs {
		c.status[n] = &Status{Remaining: -1}
	}
	mo := opts.Migrator
	mo.Log = opts.Log
	mo.Progress = c.progress
	var err error
	if c.m, err = New(cfg, mo); err != nil {
		return nil, err
	}
	if c.metrics, err = newMetrics(opts.Registry); err != nil {
		return nil, fmt.Errorf("registering the storage migration metrics: %w", err)
	}
	return c, nil
}

// NeedLeaderElection: only the leader migrates.
func (c *Controller) NeedLeaderElection() bool { return true }

// Status returns what the Controller knows about the CRD named name.
func (c *Controller) Status(name string) (Status, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.status[name]
	if !ok {
		return Status{}, false
	}
	out := *s
	out.StoredVersions = slices.Clone(s.StoredVersions)
	return out, true
}

func (c *Controller) setStatus(name string, f func(*Status)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.status[name]; s != nil {
		f(s)
	}
}

func (c *Controller) progress(p Progress) {
	c.setStatus(p.CRD, func(s *Status) {
		s.Migrating, s.Migrated, s.Remaining = p.Migrating, p.Migrated, p.Remaining
		s.StoredVersions = p.StoredVersions
	})
	c.metrics.remaining.WithLabelValues(p.CRD).Set(float64(max(p.Remaining, 0)))
}

// Start watches the CRDs and migrates until ctx is done.
func (c *Controller) Start(ctx context.Context) error {
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Second, 5*time.Minute),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "storage-migration"})
	defer c.queue.ShutDown()
	ext, err := apiextensionsclient.NewForConfig(c.cfg)
	if err != nil {
		return err
	}
	var synced []toolscache.InformerSynced
	for _, name := range c.opts.CRDs {
		lw := toolscache.NewFilteredListWatchFromClient(ext.ApiextensionsV1().RESTClient(), "customresourcedefinitions", metav1.NamespaceAll,
			func(o *metav1.ListOptions) {
				o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
			})
		inf := toolscache.NewSharedIndexInformer(lw, &apiextensionsv1.CustomResourceDefinition{}, c.opts.Resync, toolscache.Indexers{})
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    c.observe,
			UpdateFunc: func(_, o any) { c.observe(o) },
		}); err != nil {
			return err
		}
		go inf.Run(ctx.Done())
		synced = append(synced, inf.HasSynced)
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil
	}
	go func() {
		<-ctx.Done()
		c.queue.ShutDown()
	}()
	for c.next(ctx) {
	}
	return nil
}

// observe records a CRD's stored versions and queues it when it needs a
// migration.
func (c *Controller) observe(obj any) {
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return
	}
	c.mu.Lock()
	c.uids[crd.Name] = crd.UID
	c.mu.Unlock()
	c.setStatus(crd.Name, func(s *Status) {
		if !s.Migrating {
			s.StoredVersions = slices.Clone(crd.Status.StoredVersions)
		}
	})
	c.metrics.stored.WithLabelValues(crd.Name).Set(float64(len(crd.Status.StoredVersions)))
	if NeedsMigration(crd) {
		c.queue.Add(crd.Name)
	}
}

func (c *Controller) next(ctx context.Context) bool {
	name, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(name)
	if err := c.migrate(ctx, name); err != nil {
		if ctx.Err() == nil {
			c.queue.AddRateLimited(name)
		}
		return true
	}
	c.queue.Forget(name)
	return true
}

func (c *Controller) migrate(ctx context.Context, name string) error {
	log := c.opts.Log.WithValues("crd", name)
	c.metrics.running.WithLabelValues(name).Set(1)
	defer c.metrics.running.WithLabelValues(name).Set(0)
	c.setStatus(name, func(s *Status) { s.Migrating, s.LastError = true, "" })
	c.event(name, corev1.EventTypeNormal, ReasonStarted, "Migrate", "migrating stored objects to the storage version")
	res, err := c.m.Migrate(ctx, name)
	c.metrics.objects.WithLabelValues(name, "migrated").Add(float64(res.Migrated))
	c.metrics.objects.WithLabelValues(name, "skipped").Add(float64(res.Skipped))
	c.setStatus(name, func(s *Status) {
		s.Migrating = false
		if res.StoredAfter != nil {
			s.StoredVersions = slices.Clone(res.StoredAfter)
		}
		if err != nil {
			s.LastError = err.Error()
		} else {
			s.Remaining = 0
		}
	})
	switch {
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		log.Info("storage migration stopped; it resumes on the next leader", "migrated", res.Migrated)
		return err
	case err != nil:
		c.metrics.runs.WithLabelValues(name, "failed").Inc()
		c.event(name, corev1.EventTypeWarning, ReasonFailed, "Migrate", "storage migration failed: %v", err)
		log.Error(err, "storage migration failed; retrying with backoff")
		return err
	case res.Method == MethodNone:
		return nil
	}
	c.metrics.runs.WithLabelValues(name, "succeeded").Inc()
	c.metrics.stored.WithLabelValues(name).Set(float64(len(res.StoredAfter)))
	c.event(name, corev1.EventTypeNormal, ReasonSucceeded, "Migrate", "stored objects migrated to %s (%s: %d rewritten, %d changed or deleted meanwhile) in %s; storedVersions %v → %v",
		res.StorageVersion, res.Method, res.Migrated, res.Skipped, res.Duration.Round(time.Millisecond), res.StoredBefore, res.StoredAfter)
	log.Info("storage migration succeeded", "method", res.Method, "migrated", res.Migrated, "skipped", res.Skipped, "resumed", res.Resumed, "storedVersions", res.StoredAfter, "duration", res.Duration.String())
	return nil
}

// event records an event on the CRD named name.
func (c *Controller) event(name, eventType, reason, action, note string, args ...any) {
	if c.opts.Recorder == nil {
		return
	}
	c.mu.Lock()
	uid := c.uids[name]
	c.mu.Unlock()
	ref := &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: uid},
	}
	c.opts.Recorder.Eventf(ref, nil, eventType, reason, action, note, args...)
}
