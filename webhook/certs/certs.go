// Package certs is Orkestra's built-in certificate mode for the /convert
// webhook, used when no certificate is mounted: a CA and a serving
// certificate kept in one Secret that every replica shares, the CA bundle
// written into the katalog's CRDs (and written back when something reverts
// it), and rotation before expiry.
//
// Every replica runs a Manager. It reads the Secret, creates it when absent
// (create is atomic: when replicas race, one wins and the others read its
// Secret) and rotates it when due (update carries the resourceVersion read:
// on a conflict the replica reads again and finds the rotation done). Each
// replica writes the Secret's serving certificate to files in CertDir, which
// the webhook server watches (controller-runtime's certwatcher), so a
// rotated certificate is served without a restart.
//
// The CA lives ten years by default and signs serving certificates that live
// one; a serving certificate is reissued when a third of its lifetime is
// left, by the same CA, so the CRDs' bundle does not change. A CA that nears
// its end is rotated in two steps: the next CA is first added to the bundle,
// and signs serving certificates only once every CRD's bundle holds it and
// CAPromotionDelay has passed; the old CA stays in the bundle until it
// expires.
package certs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/orkspace/orkestra-cel/engine"
)

// Defaults of the built-in certificate mode.
const (
	DefaultSecretName       = "orkestra-webhook-tls"
	DefaultServiceName      = "orkestra"
	DefaultCAValidity       = 10 * 365 * 24 * time.Hour
	DefaultCertValidity     = 365 * 24 * time.Hour
	DefaultCAPromotionDelay = 10 * time.Minute
	DefaultCheckInterval    = time.Minute
	// FieldManager is the field manager of the caBundle patches.
	FieldManager = "orkestra-certs"
	// EnvPodNamespace is read for the Secret's namespace (set from the
	// downward API in the generated Deployment).
	EnvPodNamespace = "POD_NAMESPACE"
)

// inClusterNamespaceFile holds the pod's namespace in a cluster.
const inClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// InClusterNamespace is the namespace of the pod this process runs in, ""
// outside a cluster.
func InClusterNamespace() string {
	b, err := os.ReadFile(inClusterNamespaceFile)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// File names written in CertDir.
const (
	CertFileName = "tls.crt"
	KeyFileName  = "tls.key"
)

// Options configure the built-in certificate mode.
type Options struct {
	// SecretName and Namespace locate the certificate Secret. An empty
	// Namespace is filled by Complete.
	SecretName string
	Namespace  string
	// ServiceName is the Service in front of the webhook: the serving
	// certificate covers <svc>, <svc>.<ns>, <svc>.<ns>.svc and
	// <svc>.<ns>.svc.cluster.local. Empty: no Service names.
	ServiceName string
	// DNSNames and IPs the certificate covers besides the Service's names.
	DNSNames []string
	IPs      []net.IP
	// CertDir receives tls.crt and tls.key for the webhook server.
	CertDir string
	// CRDs are the names of the CustomResourceDefinitions whose conversion
	// webhook caBundle is kept equal to the Secret's bundle. CRDs whose
	// conversion strategy is not Webhook are left alone.
	CRDs []string
	// Lifetimes; a certificate is renewed when a third of its lifetime is
	// left.
	CAValidity, CertValidity time.Duration
	// CAPromotionDelay, see Policy.
	CAPromotionDelay time.Duration
	// CheckInterval is how often expiry is checked (the Secret and the CRDs
	// are also watched).
	CheckInterval time.Duration
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	Log logr.Logger
}

// DefaultOptions returns the defaults of the flags.
func DefaultOptions() Options {
	return Options{
		SecretName:       DefaultSecretName,
		ServiceName:      DefaultServiceName,
		CertDir:          filepath.Join(os.TempDir(), "orkestra-certs"),
		CAValidity:       DefaultCAValidity,
		CertValidity:     DefaultCertValidity,
		CAPromotionDelay: DefaultCAPromotionDelay,
		CheckInterval:    DefaultCheckInterval,
	}
}

// AddFlags registers the built-in certificate flags on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.SecretName, "cert-secret", o.SecretName, "built-in certificates (used when no --tls-cert is given): the Secret holding the CA and serving certificate all replicas share")
	fs.StringVar(&o.Namespace, "cert-namespace", o.Namespace, "namespace of --cert-secret (default: $"+EnvPodNamespace+", else the pod's namespace, else default)")
	fs.StringVar(&o.ServiceName, "webhook-service", o.ServiceName, "built-in certificates: the Service in front of the webhook; the certificate covers its DNS names")
	fs.StringSliceVar(&o.DNSNames, "cert-dns-names", o.DNSNames, "built-in certificates: more DNS names the serving certificate covers")
	fs.IPSliceVar(&o.IPs, "cert-ips", o.IPs, "built-in certificates: IP addresses the serving certificate covers")
	fs.StringVar(&o.CertDir, "cert-dir", o.CertDir, "built-in certificates: directory the serving certificate is written to (an emptyDir in a pod)")
	fs.DurationVar(&o.CertValidity, "cert-validity", o.CertValidity, "built-in certificates: lifetime of a serving certificate (reissued when a third is left)")
	fs.DurationVar(&o.CAValidity, "ca-validity", o.CAValidity, "built-in certificates: lifetime of the CA (rotated when a third is left)")
}

// Complete fills Namespace (from $POD_NAMESPACE, else the in-cluster
// namespace file, else "default") and the defaults of unset fields.
// getenv is os.Getenv in the binary.
func (o *Options) Complete(getenv func(string) string) {
	def := DefaultOptions()
	if o.Namespace == "" {
		o.Namespace = getenv(EnvPodNamespace)
	}
	if o.Namespace == "" {
		o.Namespace = InClusterNamespace()
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.SecretName == "" {
		o.SecretName = def.SecretName
	}
	if o.CertDir == "" {
		o.CertDir = def.CertDir
	}
	if o.CAValidity <= 0 {
		o.CAValidity = def.CAValidity
	}
	if o.CertValidity <= 0 {
		o.CertValidity = def.CertValidity
	}
	if o.CAPromotionDelay <= 0 {
		o.CAPromotionDelay = def.CAPromotionDelay
	}
	if o.CheckInterval <= 0 {
		o.CheckInterval = def.CheckInterval
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Files returns the certificate and key files the webhook server must
// load: --tls-cert and --tls-key in built-in mode.
func (o *Options) Files() (certFile, keyFile string) {
	return filepath.Join(o.CertDir, CertFileName), filepath.Join(o.CertDir, KeyFileName)
}

// ServiceDNSNames are the names a Service is reached by inside a cluster.
func ServiceDNSNames(service, namespace string) []string {
	if service == "" {
		return nil
	}
	return []string{
		service + "." + namespace + ".svc",
		service + "." + namespace + ".svc.cluster.local",
		service + "." + namespace,
		service,
	}
}

// Policy returns the policy the Secret must satisfy.
func (o *Options) Policy() Policy {
	dns := ServiceDNSNames(o.ServiceName, o.Namespace)
	for _, n := range o.DNSNames {
		if !slices.Contains(dns, n) {
			dns = append(dns, n)
		}
	}
	return Policy{
		DNSNames:         dns,
		IPs:              o.IPs,
		CAValidity:       o.CAValidity,
		CertValidity:     o.CertValidity,
		CARenewBefore:    o.CAValidity / 3,
		CertRenewBefore:  o.CertValidity / 3,
		CAPromotionDelay: o.CAPromotionDelay,
	}
}

// Manager keeps the certificate Secret, the files and the CRDs' caBundle.
// Call Bootstrap before the webhook server starts (it writes the files the
// server loads), then run Start (a controller-runtime Runnable that does not
// need leader election: every replica writes its own files).
type Manager struct {
	opts   Options
	policy Policy
	kube   kubernetes.Interface
	ext    apiextensionsclient.Interface
	log    logr.Logger

	mu     sync.Mutex
	bundle []byte
	kick   chan struct{}

	crdStores map[string]toolscache.Store
}

// New returns a Manager; opts are completed with Complete(os.Getenv).
func New(cfg *rest.Config, opts Options) (*Manager, error) {
	opts.Complete(os.Getenv)
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Manager{
		opts:      opts,
		policy:    opts.Policy(),
		kube:      kube,
		ext:       ext,
		log:       opts.Log,
		kick:      make(chan struct{}, 1),
		crdStores: map[string]toolscache.Store{},
	}, nil
}

// Options returns the completed options.
func (m *Manager) Options() Options { return m.opts }

// CABundle returns the CA bundle (PEM) of the last Secret read.
func (m *Manager) CABundle() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return bytes.Clone(m.bundle)
}

// NeedLeaderElection is false: every replica serves /convert and needs the
// certificate files.
func (m *Manager) NeedLeaderElection() bool { return false }

// Bootstrap makes sure the Secret exists and is valid, writes the serving
// certificate files and injects the CA bundle into the CRDs present.
func (m *Manager) Bootstrap(ctx context.Context) error {
	s, err := m.ensureSecret(ctx)
	if err != nil {
		return err
	}
	if err := m.writeFiles(s); err != nil {
		return err
	}
	// Start retries what fails here (a CRD not writable yet).
	if err := m.injectAll(ctx); err != nil {
		m.log.Error(err, "built-in webhook certificates: writing the CA bundle into the CRDs failed; retrying in the background")
	}
	return nil
}

// Sync runs one pass: the Secret (created or rotated when due), the files,
// the CRDs' caBundle.
func (m *Manager) Sync(ctx context.Context) error {
	s, err := m.ensureSecret(ctx)
	if err != nil {
		return err
	}
	if err := m.writeFiles(s); err != nil {
		return err
	}
	return m.injectAll(ctx)
}

func (m *Manager) secretRef() string { return m.opts.Namespace + "/" + m.opts.SecretName }

// ensureSecret reads the Secret, creating or updating it as the policy
// demands. Both writes are optimistic: a create that finds the Secret, or an
// update that conflicts, reads again.
func (m *Manager) ensureSecret(ctx context.Context) (*corev1.Secret, error) {
	secrets := m.kube.CoreV1().Secrets(m.opts.Namespace)
	var lastErr error
	for attempt := 0; attempt < 10; attempt++ {
		now := m.opts.Now()
		s, err := secrets.Get(ctx, m.opts.SecretName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			r, err := Reconcile(nil, nil, m.policy, now, nil)
			if err != nil {
				return nil, err
			}
			s = &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{
					Name:      m.opts.SecretName,
					Namespace: m.opts.Namespace,
					Labels: map[string]string{
						"app.kubernetes.io/managed-by": "orkestra",
						"app.kubernetes.io/component":  "webhook-certificate",
					},
					Annotations: r.Annotations,
				},
				Type: corev1.SecretTypeTLS,
				Data: r.Data,
			}
			created, err := secrets.Create(ctx, s, metav1.CreateOptions{FieldManager: FieldManager})
			if apierrors.IsAlreadyExists(err) {
				lastErr = err
				continue // another replica created it: use theirs
			}
			if err != nil {
				return nil, m.secretError("creating", err)
			}
			m.log.Info("created the webhook certificate Secret", "secret", m.secretRef(), "reasons", r.Reasons)
			m.setBundle(created)
			return created, nil
		case err != nil:
			return nil, m.secretError("reading", err)
		}
		r, err := Reconcile(s.Data, s.Annotations, m.policy, now, func(next []byte) bool { return m.crdsTrust(ctx, next) })
		if err != nil {
			return nil, err
		}
		if !r.Changed {
			m.setBundle(s)
			return s, nil
		}
		s = s.DeepCopy()
		s.Data = r.Data
		s.Annotations = r.Annotations
		updated, err := secrets.Update(ctx, s, metav1.UpdateOptions{FieldManager: FieldManager})
		if apierrors.IsConflict(err) {
			lastErr = err
			continue // another replica rotated it first: read theirs
		}
		if err != nil {
			return nil, m.secretError("updating", err)
		}
		m.log.Info("updated the webhook certificate Secret", "secret", m.secretRef(), "reasons", r.Reasons)
		m.setBundle(updated)
		return updated, nil
	}
	return nil, fmt.Errorf("webhook certificate Secret %s: gave up after repeated conflicts: %w", m.secretRef(), lastErr)
}

func (m *Manager) secretError(verb string, err error) error {
	hint := ""
	if apierrors.IsForbidden(err) {
		hint = fmt.Sprintf("; the service account needs get, create and update on secrets named %s in %s (orkestra manifests grants them), or mount a certificate and pass --tls-cert and --tls-key", m.opts.SecretName, m.opts.Namespace)
	}
	return fmt.Errorf("%s the webhook certificate Secret %s: %w%s", verb, m.secretRef(), err, hint)
}

func (m *Manager) setBundle(s *corev1.Secret) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bundle = bytes.Clone(s.Data[KeyCABundle])
}

// writeFiles writes the serving certificate and key where the webhook
// server's certificate watcher reads them, when they changed. Each file is
// replaced atomically (write, then rename).
func (m *Manager) writeFiles(s *corev1.Secret) error {
	cert, key := s.Data[KeyTLSCert], s.Data[KeyTLSKey]
	if len(cert) == 0 || len(key) == 0 {
		return fmt.Errorf("webhook certificate Secret %s: %w", m.secretRef(), errNoCert)
	}
	if err := os.MkdirAll(m.opts.CertDir, 0o700); err != nil {
		return fmt.Errorf("creating --cert-dir: %w (in a pod with a read-only root filesystem, mount an emptyDir there)", err)
	}
	certFile, keyFile := m.opts.Files()
	changed := false
	// The key first: the watcher keeps serving the old pair while the two
	// files do not match.
	for _, f := range []struct {
		path string
		data []byte
	}{{keyFile, key}, {certFile, cert}} {
		if cur, err := os.ReadFile(f.path); err == nil && bytes.Equal(cur, f.data) {
			continue
		}
		if err := writeAtomic(f.path, f.data); err != nil {
			return err
		}
		changed = true
	}
	if changed {
		m.log.Info("wrote the webhook serving certificate", "dir", m.opts.CertDir, "secret", m.secretRef())
	}
	return nil
}

func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// crd returns the CRD named name from the watch cache when running, else
// from the API server; nil when it does not exist.
func (m *Manager) crd(ctx context.Context, name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	m.mu.Lock()
	store := m.crdStores[name]
	m.mu.Unlock()
	if store != nil {
		obj, ok, err := store.GetByKey(name)
		if err == nil && ok {
			return obj.(*apiextensionsv1.CustomResourceDefinition), nil
		}
		if err == nil {
			return nil, nil
		}
	}
	c, err := m.ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return c, err
}

// webhookClientConfig returns the CRD's conversion webhook client config,
// or nil when the CRD does not convert through a webhook.
func webhookClientConfig(c *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.WebhookClientConfig {
	conv := c.Spec.Conversion
	if conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter || conv.Webhook == nil {
		return nil
	}
	return conv.Webhook.ClientConfig
}

// crdsTrust reports whether every CRD that converts through a webhook
// already holds the PEM certificates in its caBundle.
func (m *Manager) crdsTrust(ctx context.Context, certs []byte) bool {
	for _, name := range m.opts.CRDs {
		c, err := m.crd(ctx, name)
		if err != nil {
			return false
		}
		if c == nil {
			continue
		}
		if cc := webhookClientConfig(c); cc != nil && !BundleContains(cc.CABundle, certs) {
			return false
		}
	}
	return true
}

// injectAll writes the bundle into every CRD that converts through a
// webhook and holds another caBundle.
func (m *Manager) injectAll(ctx context.Context) error {
	bundle := m.CABundle()
	var errs []error
	for _, name := range m.opts.CRDs {
		c, err := m.crd(ctx, name)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading CRD %s: %w", name, err))
			continue
		}
		if c == nil {
			m.log.V(1).Info("CRD not installed yet; its caBundle is written when it appears", "crd", name)
			continue
		}
		if err := m.inject(ctx, c, bundle); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (m *Manager) inject(ctx context.Context, c *apiextensionsv1.CustomResourceDefinition, bundle []byte) error {
	cc := webhookClientConfig(c)
	if cc == nil {
		m.log.V(1).Info("CRD does not convert through a webhook; caBundle left alone", "crd", c.Name)
		return nil
	}
	if bytes.Equal(cc.CABundle, bundle) {
		return nil
	}
	patch, err := caBundlePatch(bundle)
	if err != nil {
		return err
	}
	_, err = m.ext.ApiextensionsV1().CustomResourceDefinitions().Patch(ctx, c.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		hint := ""
		if apierrors.IsForbidden(err) {
			hint = fmt.Sprintf("; the service account needs patch on customresourcedefinitions named %s", c.Name)
		}
		return fmt.Errorf("writing the CA bundle into CRD %s: %w%s", c.Name, err, hint)
	}
	if len(cc.CABundle) == 0 {
		m.log.Info("wrote the CA bundle into the CRD's conversion webhook", "crd", c.Name)
	} else {
		m.log.Info("the CRD's conversion caBundle differed from the certificate Secret's; wrote it back", "crd", c.Name)
	}
	return nil
}

func caBundlePatch(bundle []byte) ([]byte, error) {
	return json.Marshal(map[string]any{
		"spec": map[string]any{
			"conversion": map[string]any{
				"webhook": map[string]any{
					"clientConfig": map[string]any{"caBundle": bundle},
				},
			},
		},
	})
}

// Start watches the Secret (one object, by name) and the CRDs (each by
// name: the RBAC rules name them), and syncs on every change and every
// CheckInterval until ctx is done. Errors are logged and retried.
func (m *Manager) Start(ctx context.Context) error {
	secretSel := fields.OneTermEqualSelector("metadata.name", m.opts.SecretName).String()
	secrets := m.kube.CoreV1().Secrets(m.opts.Namespace)
	inf := toolscache.NewSharedIndexInformer(&toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = secretSel
			return secrets.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = secretSel
			return secrets.Watch(ctx, o)
		},
	}, &corev1.Secret{}, 0, toolscache.Indexers{})
	informers := []toolscache.SharedIndexInformer{inf}
	stores := map[string]toolscache.Store{}
	crds := m.ext.ApiextensionsV1().CustomResourceDefinitions()
	for _, name := range m.opts.CRDs {
		sel := fields.OneTermEqualSelector("metadata.name", name).String()
		ci := toolscache.NewSharedIndexInformer(&toolscache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				o.FieldSelector = sel
				return crds.List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				o.FieldSelector = sel
				return crds.Watch(ctx, o)
			},
		}, &apiextensionsv1.CustomResourceDefinition{}, 0, toolscache.Indexers{})
		informers = append(informers, ci)
		stores[name] = ci.GetStore()
	}
	handler := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { m.trigger() },
		UpdateFunc: func(any, any) { m.trigger() },
		DeleteFunc: func(any) { m.trigger() },
	}
	for _, i := range informers {
		if _, err := i.AddEventHandler(handler); err != nil {
			return err
		}
		go i.RunWithContext(ctx)
	}
	defer func() {
		m.mu.Lock()
		m.crdStores = map[string]toolscache.Store{}
		m.mu.Unlock()
	}()
	synced := make([]toolscache.InformerSynced, 0, len(informers))
	for _, i := range informers {
		synced = append(synced, i.HasSynced)
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil
	}
	// From now on the CRDs are read from the watch caches (a cache that
	// has not synced would report a CRD absent).
	m.mu.Lock()
	m.crdStores = stores
	m.mu.Unlock()
	ticker := time.NewTicker(m.opts.CheckInterval)
	defer ticker.Stop()
	backoff := time.Second
	for {
		if err := m.Sync(ctx); err != nil && ctx.Err() == nil {
			m.log.Error(err, "built-in webhook certificates: sync failed; retrying", "retryIn", backoff)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Minute)
			continue
		}
		backoff = time.Second
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		case <-m.kick:
		}
	}
}

func (m *Manager) trigger() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// Runnables is what Setup adds the Manager to: a controller-runtime
// manager.Manager.
type Runnables interface {
	Add(manager.Runnable) error
}

// Setup wires the built-in mode into `orkestra run`: it completes opts for
// plan (its CRDs), bootstraps (the Secret, the files at opts.Files(), the
// CRDs' caBundle) and adds the Manager to mgr, where it keeps all three up
// to date on every replica. Call it after creating the manager and before
// starting it (the webhook server loads the files when it starts).
func Setup(ctx context.Context, cfg *rest.Config, plan *engine.Plan, opts Options, mgr Runnables) (*Manager, error) {
	if len(opts.CRDs) == 0 {
		opts.CRDs = plan.WebhookCRDNames()
	}
	m, err := New(cfg, opts)
	if err != nil {
		return nil, err
	}
	if err := m.Bootstrap(ctx); err != nil {
		return nil, err
	}
	if err := mgr.Add(m); err != nil {
		return nil, err
	}
	return m, nil
}
