// Package storage migrates the stored objects of a CRD to its storage
// version and then drops the other versions from status.storedVersions —
// the step the Kubernetes "Versions in CustomResourceDefinitions" page asks
// for before an old version can be removed.
//
// A Migrator rewrites every object with an unchanged write (a merge patch
// that only carries the object's resourceVersion: the API server reads it,
// converts it, and stores it again at the storage version), page by page,
// rate-limited, saving its progress on the CRD after each page so that a
// restart resumes there. Where the cluster runs the built-in migrator
// (storagemigration.k8s.io/v1, whose controller lives in
// kube-controller-manager) it is used instead. The Controller runs Migrators
// inside `orkestra run` on the leader.
package storage

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apiextensionsv1client "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/retry"
)

// Defaults of Options.
const (
	DefaultPageSize     = 500
	DefaultWorkers      = 4
	DefaultFieldManager = "orkestra-storage-migrator"
)

// Methods a migration ran with (Result.Method, Progress.Method).
const (
	MethodNone     = "none"     // nothing to migrate
	MethodOrkestra = "orkestra" // the Migrator rewrote the objects itself
	MethodBuiltin  = "builtin"  // a StorageVersionMigration did
)

// Options tune a Migrator.
type Options struct {
	// QPS bounds the object writes per second; 0 leaves them unbounded.
	// Burst is the bucket size (default: QPS rounded up, at least 1).
	QPS   float64
	Burst int
	// PageSize is how many objects one list page holds (default 500).
	PageSize int64
	// Workers write a page's objects in parallel (default 4).
	Workers int
	// FieldManager names the writer in managedFields.
	FieldManager string
	// BuiltinTimeout is how long a StorageVersionMigration the Migrator
	// creates may take to show any condition before the Migrator deletes it
	// and writes the objects itself. 0 never tries the built-in migrator.
	BuiltinTimeout time.Duration
	// BuiltinPoll is how often a built-in migration is read (default 1s).
	BuiltinPoll time.Duration
	// Progress, when set, is called as the migration advances (never
	// concurrently).
	Progress func(Progress)
	Log      logr.Logger
}

// Progress is a migration's state while it runs.
type Progress struct {
	CRD            string
	StorageVersion string
	StoredVersions []string
	Method         string
	Migrating      bool
	// Migrated objects were rewritten; Skipped ones changed or went away
	// during the run (so they are stored at the storage version, or gone).
	Migrated, Skipped int64
	// Remaining is how many listed objects are still to do; -1 when the
	// API server does not say (and under the built-in migrator).
	Remaining int64
}

// Result is what a migration did.
type Result struct {
	CRD            string
	StorageVersion string
	// StoredBefore and StoredAfter are status.storedVersions before and
	// after the migration.
	StoredBefore, StoredAfter []string
	Method                    string
	// Resumed is true when the run went on from saved progress.
	Resumed           bool
	Migrated, Skipped int64
	Pages             int64
	Duration          time.Duration
}

// ErrChanged means the CRD changed while its objects were migrated (another
// storage version, or storedVersions written by someone else), so
// storedVersions was left alone; migrating again settles it.
var ErrChanged = errors.New("the CRD changed during the migration")

// Migrator migrates the stored objects of CRDs. It is safe for concurrent
// use on different CRDs.
type Migrator struct {
	ext     apiextensionsclient.Interface
	meta    metadata.Interface
	kube    kubernetes.Interface
	opts    Options
	limiter flowcontrol.RateLimiter
	// builtin remembers whether StorageVersionMigrations progress here.
	builtin atomic.Int32
}

const (
	builtinUnknown int32 = iota
	builtinAvailable
	builtinUnavailable
)

// New returns a Migrator using cfg. Writes are limited by opts.QPS only (the
// client's own rate limiter is off).
func New(cfg *rest.Config, opts Options) (*Migrator, error) {
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.FieldManager == "" {
		opts.FieldManager = DefaultFieldManager
	}
	if opts.BuiltinPoll <= 0 {
		opts.BuiltinPoll = time.Second
	}
	if opts.QPS < 0 {
		return nil, fmt.Errorf("the storage migration QPS must not be negative, got %g", opts.QPS)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.RateLimiter = -1, nil
	m := &Migrator{opts: opts}
	var err error
	if m.ext, err = apiextensionsclient.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if m.meta, err = metadata.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if m.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if opts.QPS > 0 {
		burst := opts.Burst
		if burst <= 0 {
			burst = max(1, int(opts.QPS+0.999))
		}
		m.limiter = flowcontrol.NewTokenBucketRateLimiter(float32(opts.QPS), burst)
	}
	return m, nil
}

func (m *Migrator) crds() apiextensionsv1client.CustomResourceDefinitionInterface {
	return m.ext.ApiextensionsV1().CustomResourceDefinitions()
}

// storageGVR is the resource of crd at its storage version.
func storageGVR(crd *apiextensionsv1.CustomResourceDefinition) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: crd.Spec.Group, Version: StorageVersion(crd), Resource: crd.Spec.Names.Plural}
}

// Migrate migrates the objects of the CRD named name to its storage version
// and then sets status.storedVersions to that version alone — only if the
// CRD's generation, storage version and storedVersions are still what they
// were when the migration started (else ErrChanged).
func (m *Migrator) Migrate(ctx context.Context, name string) (Result, error) {
	start := time.Now()
	crd, err := m.crds().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return Result{CRD: name}, fmt.Errorf("reading CRD %s: %w", name, err)
	}
	res := Result{CRD: name, StorageVersion: StorageVersion(crd), StoredBefore: slices.Clone(crd.Status.StoredVersions), Method: MethodNone}
	if !NeedsMigration(crd) {
		res.StoredAfter = res.StoredBefore
		if _, stale := crd.Annotations[AnnotationProgress]; stale {
			err = m.dropProgress(ctx, name)
		}
		return res, err
	}
	st, resumed, reason := savedState(crd)
	if reason != "" {
		m.opts.Log.Info(reason, "crd", name)
	}
	if !resumed {
		st = newState(crd)
	}
	res.Resumed = resumed
	rep := &reporter{f: m.opts.Progress, p: Progress{CRD: name, StorageVersion: st.StorageVersion, StoredVersions: st.StoredVersions,
		Migrating: true, Migrated: st.Migrated, Skipped: st.Skipped, Remaining: -1}}

	ran := false
	if m.opts.BuiltinTimeout > 0 && m.builtin.Load() != builtinUnavailable {
		if ran, err = m.viaBuiltin(ctx, crd, rep); err != nil {
			return m.finish(res, start, err)
		}
	}
	if ran {
		res.Method = MethodBuiltin
	} else {
		res.Method = MethodOrkestra
		err := m.rewriteAll(ctx, crd, &st, rep)
		res.Migrated, res.Skipped, res.Pages = st.Migrated, st.Skipped, st.Pages
		if err != nil {
			m.failCondition(name, err)
			return m.finish(res, start, err)
		}
	}
	after, err := m.prune(ctx, name, st, !ran)
	res.StoredAfter = after
	if err == nil {
		err = m.dropProgress(ctx, name)
	} else if !ran {
		m.failCondition(name, err)
	}
	return m.finish(res, start, err)
}

// rewriteAll is the migration Orkestra does itself: the StorageMigrating
// condition, then, once the API server stores at the storage version,
// every object rewritten.
func (m *Migrator) rewriteAll(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, st *progressState, rep *reporter) error {
	rep.update(func(p *Progress) { p.Method = MethodOrkestra })
	msg := fmt.Sprintf("Orkestra is rewriting the stored objects at %s (stored versions %v)", st.StorageVersion, st.StoredVersions)
	if err := m.setCondition(ctx, crd.Name, apiextensionsv1.ConditionTrue, "MigrationRunning", msg); err != nil {
		return err
	}
	if err := m.awaitStorage(ctx, crd); err != nil {
		return err
	}
	return m.rewrite(ctx, crd, st, rep)
}

func (m *Migrator) finish(res Result, start time.Time, err error) (Result, error) {
	res.Duration = time.Since(start)
	return res, err
}

// StorageWait bounds how long a migration waits for the API server to store
// at the CRD's new storage version.
const StorageWait = time.Minute

// awaitStorage waits until the API server reports storing crd's objects at
// its storage version (discovery's storageVersionHash): an unchanged write
// made before would store the object at the previous version again.
func (m *Migrator) awaitStorage(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	storage := StorageVersion(crd)
	want := storageVersionHash(crd.Spec.Group, storage, crd.Spec.Names.Kind)
	served := ""
	for _, v := range crd.Spec.Versions {
		if v.Served {
			served = v.Name
			break
		}
	}
	if served == "" {
		return nil // nothing is served, so nothing reports it; nothing writes either
	}
	got := ""
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, StorageWait, true, func(ctx context.Context) (bool, error) {
		list, err := m.kube.Discovery().ServerResourcesForGroupVersion(crd.Spec.Group + "/" + served)
		if err != nil {
			return false, nil
		}
		for _, r := range list.APIResources {
			if r.Name == crd.Spec.Names.Plural {
				got = r.StorageVersionHash
				return got == want, nil
			}
		}
		return false, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("the API server does not report storing CRD %s at %s after %s (discovery's storageVersionHash is %q, want %q)", crd.Name, storage, StorageWait, got, want)
	}
	return nil
}

// storageVersionHash is the value discovery reports for a resource stored
// as group/version/kind: k8s.io/apiserver's discovery.StorageVersionHash
// (not imported: its package drags in the API server's HTTP stack).
func storageVersionHash(group, version, kind string) string {
	sum := sha256.Sum256([]byte(group + "/" + version + "/" + kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

// rewrite writes every object once, from st's continue token on, saving st
// on the CRD after each page.
func (m *Migrator) rewrite(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, st *progressState, rep *reporter) error {
	gvr := storageGVR(crd)
	res := m.meta.Resource(gvr)
	for {
		list, err := res.List(ctx, metav1.ListOptions{Limit: m.opts.PageSize, Continue: st.Continue})
		if apierrors.IsResourceExpired(err) && st.Continue != "" {
			// The token outlived etcd's compaction. The error carries one
			// that goes on from the same key without a consistent
			// snapshot, which is all a migration needs: objects written
			// since are stored at the storage version anyway.
			st.Continue = expiredContinue(err)
			m.opts.Log.Info("the saved list position expired; going on from the same object", "crd", crd.Name, "fromStart", st.Continue == "")
			continue
		}
		if err != nil {
			return fmt.Errorf("listing %s at %s: %w", gvr.GroupResource(), gvr.Version, err)
		}
		remaining := int64(-1)
		if list.RemainingItemCount != nil {
			remaining = *list.RemainingItemCount + int64(len(list.Items))
		}
		rep.update(func(p *Progress) { p.Remaining = remaining })
		migrated, skipped, err := m.page(ctx, gvr, list.Items, rep)
		st.Migrated += migrated
		st.Skipped += skipped
		if err != nil {
			return err
		}
		st.Pages++
		st.Continue = list.Continue
		if st.Continue == "" {
			rep.update(func(p *Progress) { p.Remaining = 0 })
			return nil
		}
		if err := m.saveProgress(ctx, crd.Name, st); err != nil {
			return err
		}
	}
}

// expiredContinue returns the continue token a 410 Gone answer offers to
// go on inconsistently, or "" (start over).
func expiredContinue(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().ListMeta.Continue
	}
	return ""
}

// page rewrites items with the Migrator's workers. An object that changed
// (conflict) or went away (not found) since the list counts as skipped: it
// is stored at the storage version already, or not at all.
func (m *Migrator) page(ctx context.Context, gvr schema.GroupVersionResource, items []metav1.PartialObjectMetadata, rep *reporter) (migrated, skipped int64, err error) {
	pageCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan *metav1.PartialObjectMetadata)
	var wg sync.WaitGroup
	var nMigrated, nSkipped atomic.Int64
	var failOnce sync.Once
	var failed error
	for range min(m.opts.Workers, len(items)) {
		wg.Go(func() {
			for obj := range next {
				wrote, err := m.rewriteOne(pageCtx, gvr, obj)
				if err != nil {
					failOnce.Do(func() { failed = err; cancel() })
					continue
				}
				if wrote {
					nMigrated.Add(1)
				} else {
					nSkipped.Add(1)
				}
				rep.update(func(p *Progress) {
					if wrote {
						p.Migrated++
					} else {
						p.Skipped++
					}
					if p.Remaining > 0 {
						p.Remaining--
					}
				})
			}
		})
	}
feed:
	for i := range items {
		select {
		case next <- &items[i]:
		case <-pageCtx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	switch {
	case ctx.Err() != nil:
		err = ctx.Err()
	case failed != nil:
		err = failed
	}
	return nMigrated.Load(), nSkipped.Load(), err
}

// rewriteOne writes obj unchanged: a merge patch holding only its
// resourceVersion, so that a concurrent change makes it a conflict instead
// of a lost update. wrote is false when the object changed or went away.
func (m *Migrator) rewriteOne(ctx context.Context, gvr schema.GroupVersionResource, obj *metav1.PartialObjectMetadata) (wrote bool, err error) {
	patch := []byte(`{"metadata":{"resourceVersion":` + strconv.Quote(obj.ResourceVersion) + `}}`)
	res := m.meta.Resource(gvr).Namespace(obj.Namespace)
	backoff := retry.DefaultBackoff
	for attempt := 0; ; attempt++ {
		if m.limiter != nil {
			if err := m.limiter.Wait(ctx); err != nil {
				return false, err
			}
		}
		_, err = res.Patch(ctx, obj.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: m.opts.FieldManager})
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
			return false, nil
		case retriable(err) && attempt < backoff.Steps:
			select {
			case <-time.After(backoff.Step()):
			case <-ctx.Done():
				return false, ctx.Err()
			}
		default:
			return false, fmt.Errorf("rewriting %s %s at %s: %w", gvr.GroupResource(), objectName(obj), gvr.Version, err)
		}
	}
}

func retriable(err error) bool {
	return apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsServiceUnavailable(err)
}

func objectName(obj *metav1.PartialObjectMetadata) string {
	if obj.Namespace == "" {
		return obj.Name
	}
	return obj.Namespace + "/" + obj.Name
}

// saveProgress writes st into the CRD's progress annotation.
func (m *Migrator) saveProgress(ctx context.Context, name string, st *progressState) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%s:%s}}}`, strconv.Quote(AnnotationProgress), strconv.Quote(st.encode()))
	crd, err := m.crds().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: m.opts.FieldManager})
	if err != nil {
		return fmt.Errorf("saving the migration's progress on CRD %s: %w", name, err)
	}
	if crd.Generation != st.Generation {
		return fmt.Errorf("%w: generation %d became %d (its versions changed); migrating again from the start", ErrChanged, st.Generation, crd.Generation)
	}
	return nil
}

func (m *Migrator) dropProgress(ctx context.Context, name string) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%s:null}}}`, strconv.Quote(AnnotationProgress))
	if _, err := m.crds().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: m.opts.FieldManager}); err != nil {
		return fmt.Errorf("removing the finished migration's progress from CRD %s: %w", name, err)
	}
	return nil
}

// prune sets storedVersions to the storage version alone if the CRD is still
// as st found it. Written with the resourceVersion just read, so a change in
// between is a conflict and the check runs again. It returns the stored
// versions after.
func (m *Migrator) prune(ctx context.Context, name string, st progressState, condition bool) ([]string, error) {
	var after []string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd, err := m.crds().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading CRD %s: %w", name, err)
		}
		after = crd.Status.StoredVersions
		switch {
		case crd.Generation != st.Generation || StorageVersion(crd) != st.StorageVersion:
			return fmt.Errorf("%w: CRD %s is at generation %d with storage version %s, the migration started at generation %d with %s; storedVersions left as %v",
				ErrChanged, name, crd.Generation, StorageVersion(crd), st.Generation, st.StorageVersion, after)
		case !NeedsMigration(crd):
			return nil // someone (the built-in migrator) already did
		case !slices.Equal(crd.Status.StoredVersions, st.StoredVersions):
			return fmt.Errorf("%w: status.storedVersions of CRD %s became %v during the migration (it started at %v); left alone",
				ErrChanged, name, after, st.StoredVersions)
		}
		crd.Status.StoredVersions = []string{st.StorageVersion}
		if condition {
			setCondition(crd, apiextensionsv1.ConditionFalse, "MigrationSucceeded", fmt.Sprintf("Orkestra rewrote the stored objects at %s and set storedVersions to [%s]", st.StorageVersion, st.StorageVersion))
		}
		updated, err := m.crds().UpdateStatus(ctx, crd, metav1.UpdateOptions{FieldManager: m.opts.FieldManager})
		if err != nil {
			return err
		}
		after = updated.Status.StoredVersions
		return nil
	})
	return after, err
}

func setCondition(crd *apiextensionsv1.CustomResourceDefinition, status apiextensionsv1.ConditionStatus, reason, msg string) {
	apihelpers.SetCRDCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
		Type:               apiextensionsv1.StorageMigrating,
		Status:             status,
		Reason:             reason,
		Message:            msg,
		ObservedGeneration: crd.Generation,
	})
}

// setCondition sets the CRD's StorageMigrating condition, as the built-in
// migrator does, so that `kubectl get crd -o yaml` shows a migration.
func (m *Migrator) setCondition(ctx context.Context, name string, status apiextensionsv1.ConditionStatus, reason, msg string) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd, err := m.crds().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		setCondition(crd, status, reason, msg)
		_, err = m.crds().UpdateStatus(ctx, crd, metav1.UpdateOptions{FieldManager: m.opts.FieldManager})
		return err
	})
	if err != nil {
		return fmt.Errorf("setting the StorageMigrating condition of CRD %s: %w", name, err)
	}
	return nil
}

// failCondition records a failed run on the CRD; a failure to do so is only
// logged: the run's own error is what the caller reports.
func (m *Migrator) failCondition(name string, cause error) {
	if errors.Is(cause, context.Canceled) {
		return // stopped, not failed: the next run resumes
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.setCondition(ctx, name, apiextensionsv1.ConditionFalse, "MigrationFailed", cause.Error()); err != nil {
		m.opts.Log.Error(err, "recording the failed migration", "crd", name)
	}
}

// reporter serialises progress callbacks.
type reporter struct {
	mu sync.Mutex
	f  func(Progress)
	p  Progress
}

func (r *reporter) update(change func(*Progress)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	change(&r.p)
	if r.f != nil {
		p := r.p
		p.StoredVersions = slices.Clone(p.StoredVersions)
		r.f(p)
	}
}
