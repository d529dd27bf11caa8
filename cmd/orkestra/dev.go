package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/envassets"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/lifecycle/crdspec"
	"github.com/orkspace/orkestra-cel/operator"
	"github.com/orkspace/orkestra-cel/operator/render"
	"github.com/orkspace/orkestra-cel/webhook"
	"github.com/orkspace/orkestra-cel/webhook/certs"
)

// devFieldManager owns what `orkestra dev` applies.
const devFieldManager = "orkestra-dev"

// devFlags are `orkestra dev`'s own flags.
type devFlags struct {
	dir          string
	assets       string
	webhookPort  int
	httpAddr     string
	logVerbosity int
	// storageMigration: as orkestra run's --storage-migration. The local
	// control plane runs no kube-controller-manager, so the built-in
	// migrator is never tried.
	storageMigration bool
}

func newDevCmd() *cobra.Command {
	var kf katalogFlags
	df := devFlags{httpAddr: "127.0.0.1:8080", storageMigration: true}
	cmd := &cobra.Command{
		Use:   "dev -f KATALOG [OBJECT.yaml…]",
		Short: "Run a local control plane with the katalog's CRDs and the operator: the quickest way to try a katalog",
		Long: `dev starts a throwaway Kubernetes control plane on this machine — the
kube-apiserver and etcd that envtest uses, no kubelet, no nodes — and runs the
katalog in it:

  1. the katalog's CRDs are installed converting through this process's
     /convert webhook (https://127.0.0.1:PORT/convert, with a CA generated
     for the session in the CRDs' caBundle);
  2. a kubeconfig for the control plane is written and the command to use it
     printed (export KUBECONFIG=…);
  3. the operator runs in this process, as ` + "`orkestra run`" + ` does;
  4. the katalog's crFiles samples, and the OBJECT files given, are applied
     (server-side apply).

Pods do not run (there is no node), but everything the operator does through
the API server does: Deployments, Services, status, conversion. Ctrl-C stops
everything; the control plane's data is discarded.

The API server binaries are found in --assets, else $KUBEBUILDER_ASSETS, else
built or found by the repository's hack/envtest-assets.sh (looked for above
the current directory and the executable).`,
		Example: `  orkestra dev -f examples/website/katalog.yaml examples/website/website-v1.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			plan, err := kf.compile(cmd.ErrOrStderr())
			if errors.Is(err, errProblems) {
				return exitCode(1)
			}
			if err != nil {
				return err
			}
			log := textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(df.logVerbosity), textlogger.Output(cmd.ErrOrStderr())))
			ctrl.SetLogger(log)
			return runDev(ctrl.SetupSignalHandler(), cmd.OutOrStdout(), cmd.ErrOrStderr(), plan, args, df, log, nil)
		},
	}
	kf.register(cmd)
	fs := cmd.Flags()
	fs.StringVar(&df.dir, "dir", "", "directory for the kubeconfig and the session's certificates (default: a new temporary directory, removed on exit)")
	fs.StringVar(&df.assets, "assets", "", "directory holding kube-apiserver and etcd (default: $KUBEBUILDER_ASSETS, else hack/envtest-assets.sh)")
	fs.IntVar(&df.webhookPort, "webhook-port", 0, "port of the HTTPS /convert webhook on 127.0.0.1 (default: a free port)")
	fs.StringVar(&df.httpAddr, "http-addr", df.httpAddr, "address of /metrics, /healthz, /readyz and /katalog (empty: off)")
	fs.IntVarP(&df.logVerbosity, "verbosity", "v", 0, "log verbosity (0: info, 1 and more: debug)")
	fs.BoolVar(&df.storageMigration, "storage-migration", df.storageMigration, "migrate stored objects to the storage version when storedVersions lists another version (as orkestra run)")
	return cmd
}

// devSession is a running `orkestra dev`.
// devServiceCIDR is the local API server's Service range: 65534 Services
// (envtest's default, a /24, fails past 253).
const devServiceCIDR = "10.0.0.0/16"

type devSession struct {
	dir        string
	kubeconfig string
	cfg        *rest.Config
	webhookURL string
	httpAddr   string
	applied    []string
	// samples are the objects applied, for the suggestions printed.
	samples    []*unstructured.Unstructured
	crds       []*apiextensionsv1.CustomResourceDefinition
	strategies map[string]crdspec.Strategy
}

// runDev runs the session until ctx is done. ready, when set, is called
// once everything runs (tests).
func runDev(ctx context.Context, stdout, stderr io.Writer, plan *engine.Plan, objects []string, df devFlags, log logr.Logger, ready func(*devSession)) (err error) {
	// Read the sample objects first: a typo in a path fails before anything starts.
	var samples []string
	for _, e := range plan.Entries {
		if e.Source != nil {
			samples = appendNew(samples, e.Source.CRFiles...)
		}
	}
	samples = appendNew(samples, objects...)
	var objs []*unstructured.Unstructured
	if len(samples) > 0 {
		if objs, err = readObjects(samples, nil); err != nil {
			return err
		}
	}

	assets, err := devAssets(ctx, df.assets, stderr)
	if err != nil {
		return err
	}
	s := &devSession{dir: df.dir}
	if s.dir == "" {
		if s.dir, err = os.MkdirTemp("", "orkestra-dev-"); err != nil {
			return err
		}
		defer os.RemoveAll(s.dir)
	} else if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}

	fmt.Fprintln(stderr, "starting kube-apiserver and etcd from", assets, "…")
	env := &envtest.Environment{BinaryAssetsDirectory: assets}
	env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", devServiceCIDR)
	if s.cfg, err = env.Start(); err != nil {
		return fmt.Errorf("starting the local control plane (kube-apiserver and etcd in %s): %w", assets, err)
	}
	defer func() {
		if serr := env.Stop(); serr != nil && err == nil {
			err = fmt.Errorf("stopping the local control plane: %w", serr)
		}
	}()
	user, err := env.AddUser(envtest.User{Name: "orkestra-dev", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return err
	}
	s.kubeconfig = filepath.Join(s.dir, "kubeconfig")
	if err := os.WriteFile(s.kubeconfig, kc, 0o600); err != nil {
		return err
	}

	// The webhook: a port on 127.0.0.1 and a certificate for it.
	port := df.webhookPort
	if port == 0 {
		if port, err = freePort(); err != nil {
			return err
		}
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	s.webhookURL = "https://" + addr + webhook.ConvertPath
	caPEM, certPEM, keyPEM, err := certs.NewSelfSigned([]string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}, 30*24*time.Hour)
	if err != nil {
		return err
	}
	certDir := filepath.Join(s.dir, "certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	serving := webhook.DefaultConfig()
	serving.WebhookAddr = addr
	serving.HTTPAddr = df.httpAddr
	serving.CertFile, serving.KeyFile = filepath.Join(certDir, certs.CertFileName), filepath.Join(certDir, certs.KeyFileName)
	serving.ShutdownTimeout = 5 * time.Second
	if err := os.WriteFile(serving.CertFile, certPEM, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(serving.KeyFile, keyPEM, 0o600); err != nil {
		return err
	}
	s.httpAddr = df.httpAddr

	s.strategies = map[string]crdspec.Strategy{}
	if s.crds, err = installDevCRDs(ctx, s.cfg, plan, s.webhookURL, caPEM, s.strategies); err != nil {
		return err
	}

	// The operator, as `orkestra run` runs it (no leader election: one process).
	opCtx, stopOperator := context.WithCancel(ctx)
	defer stopOperator()
	opDone := make(chan error, 1)
	go func() {
		opDone <- runOperator(opCtx, s.cfg, plan, serving, runFlags{gracefulShutdown: 5 * time.Second, skipNameValidation: true, storageMigration: df.storageMigration, migrationQPS: defaultMigrationQPS}, log)
	}()
	if err := waitWebhook(ctx, addr, caPEM, opDone); err != nil {
		return err
	}

	if len(objs) > 0 {
		s.samples = objs
		if s.applied, err = applyObjects(ctx, s.cfg, objs); err != nil {
			stopOperator()
			<-opDone
			return err
		}
	}
	printDevSession(stdout, plan, s)
	if ready != nil {
		ready(s)
	}
	select {
	case err := <-opDone:
		if err != nil {
			return fmt.Errorf("the operator stopped: %w", err)
		}
		return nil
	case <-ctx.Done():
	}
	fmt.Fprintln(stderr, "stopping…")
	if err := <-opDone; err != nil {
		return err
	}
	return nil
}

func appendNew(list []string, items ...string) []string {
	for _, it := range items {
		found := false
		for _, l := range list {
			if l == it {
				found = true
				break
			}
		}
		if !found {
			list = append(list, it)
		}
	}
	return list
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// installDevCRDs installs the katalog's CRDs (crdspec: deprecations, and
// conversion through url with caPEM as caBundle where a webhook is needed),
// recording each one's conversion strategy in strategies.
func installDevCRDs(ctx context.Context, cfg *rest.Config, plan *engine.Plan, url string, caPEM []byte, strategies map[string]crdspec.Strategy) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	seen := map[string]bool{}
	for _, e := range plan.Entries {
		src := e.Source.CRD
		if src == nil || src.Origin == katalog.BuiltIn || seen[src.Object.Name] {
			continue // built-in kinds are served by the API server itself
		}
		seen[src.Object.Name] = true
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: src.Object.Name, Labels: src.Object.Labels, Annotations: src.Object.Annotations},
		}
		var strategy crdspec.Strategy
		crd.Spec, strategy = crdspec.Spec(plan, src, apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: caPEM})
		strategies[crd.Name] = strategy
		created, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{FieldManager: devFieldManager})
		if err != nil {
			return nil, fmt.Errorf("installing CRD %s (from %s): %w", crd.Name, src.Path, err)
		}
		out = append(out, created)
	}
	for _, c := range out {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, c.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
				if cond.Type == apiextensionsv1.NamesAccepted && cond.Status == apiextensionsv1.ConditionFalse {
					return false, fmt.Errorf("CRD %s: %s", c.Name, cond.Message)
				}
			}
			return false, nil
		})
		if err != nil {
			return nil, fmt.Errorf("CRD %s not established: %w", c.Name, err)
		}
	}
	return out, nil
}

// waitWebhook waits until the webhook serves TLS with the session's
// certificate, or the operator fails.
func waitWebhook(ctx context.Context, addr string, caPEM []byte, opDone <-chan error) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	deadline := time.Now().Add(60 * time.Second)
	for {
		d := tls.Dialer{Config: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}}
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case err := <-opDone:
			if err == nil {
				err = errors.New("it stopped")
			}
			return fmt.Errorf("the operator did not start: %w", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the webhook does not serve on %s after 60s: %w", addr, err)
		}
	}
}

// applyObjects server-side-applies objects, creating their namespaces.
func applyObjects(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) ([]string, error) {
	c, err := client.New(cfg, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		return nil, err
	}
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
			err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner(devFieldManager), client.ForceOwnership)
			if err == nil {
				return true, nil
			}
			if isNoMatch(err) {
				return false, nil
			}
			return false, err
		})
		name := o.GetKind() + " " + o.GetName()
		if o.GetNamespace() != "" {
			name = o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
		}
		if err != nil {
			return nil, fmt.Errorf("applying %s: %w", name, err)
		}
		applied = append(applied, name)
	}
	return applied, nil
}

func isNoMatch(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "no matches for kind") || apierrors.IsNotFound(err))
}

func printDevSession(w io.Writer, plan *engine.Plan, s *devSession) {
	fmt.Fprintf(w, "\nOrkestra dev: katalog %s runs on a local control plane (%s).\n\n", plan.Katalog.Name, s.cfg.Host)
	fmt.Fprintf(w, "Use it from another terminal:\n\n    export KUBECONFIG=%s\n", s.kubeconfig)
	for _, c := range s.crds {
		fmt.Fprintf(w, "    kubectl get %s -A\n", c.Spec.Names.Plural)
		break
	}
	fmt.Fprintln(w, "\nCRDs:")
	for _, c := range s.crds {
		var versions []string
		storage := ""
		for _, v := range c.Spec.Versions {
			versions = append(versions, v.Name)
			if v.Storage {
				storage = v.Name
			}
		}
		conv := "no conversion"
		switch s.strategies[c.Name] {
		case crdspec.Webhook:
			conv = "converted by " + s.webhookURL
		case crdspec.Identity:
			conv = "identity conversion: strategy None, the webhook is not called"
		}
		fmt.Fprintf(w, "    %s  versions %s (storage %s), %s\n", c.Name, strings.Join(versions, ", "), storage, conv)
	}
	if len(s.applied) > 0 {
		fmt.Fprintln(w, "\nApplied:")
		for _, a := range s.applied {
			fmt.Fprintln(w, "    "+a)
		}
	}
	if s.httpAddr != "" {
		fmt.Fprintf(w, "\nOperator: http://%s/katalog, /metrics, /healthz, /readyz\n", s.httpAddr)
	}
	if try := tryNext(s); len(try) > 0 {
		fmt.Fprintln(w, "\nTry next (with KUBECONFIG set as above):")
		for _, t := range try {
			fmt.Fprintln(w, "    "+t)
		}
	}
	fmt.Fprintln(w, "\nCtrl-C stops everything; the control plane's data is discarded.")
}

// tryNext suggests commands that show what the katalog does with the first
// applied sample: reading it at another version (through /convert), its
// children, drift correction, and the health API and metrics.
func tryNext(s *devSession) []string {
	for _, o := range s.samples {
		gvk := o.GroupVersionKind()
		for _, c := range s.crds {
			if c.Spec.Group != gvk.Group || c.Spec.Names.Kind != gvk.Kind {
				continue
			}
			ns := ""
			if o.GetNamespace() != "" {
				ns = " -n " + o.GetNamespace()
			}
			sel := fmt.Sprintf("%s=%s", render.LabelOwner, o.GetName())
			var out []string
			for _, v := range c.Spec.Versions {
				if v.Served && v.Name != gvk.Version {
					out = append(out, fmt.Sprintf("kubectl get %s.%s.%s %s%s -o yaml   # written at %s, read at %s", c.Spec.Names.Plural, v.Name, c.Spec.Group, o.GetName(), ns, gvk.Version, v.Name))
					break
				}
			}
			out = append(out,
				fmt.Sprintf("kubectl get all,configmaps,secrets%s -l %s   # the children it reconciles into", ns, sel),
				fmt.Sprintf("kubectl delete deployments,services%s -l %s   # then list again: drift correction recreates them", ns, sel))
			if s.httpAddr != "" {
				out = append(out, fmt.Sprintf("curl -s http://%s/katalog; curl -s http://%s/metrics | grep ^orkestra_", s.httpAddr, s.httpAddr))
			}
			return out
		}
	}
	return nil
}

// devAssets finds kube-apiserver and etcd: the flag, $KUBEBUILDER_ASSETS,
// else the hack/envtest-assets.sh of the checkout around the working
// directory or the binary (which provides them once, showing its progress).
func devAssets(ctx context.Context, flag string, stderr io.Writer) (string, error) {
	var starts []string
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	dir, err := envassets.Find(ctx, flag, stderr, starts...)
	if errors.Is(err, envassets.ErrNotFound) {
		return "", fmt.Errorf("no kube-apiserver and etcd for the local control plane: pass --assets DIR or set KUBEBUILDER_ASSETS to a directory holding both, or run orkestra dev inside the orkestra repository (hack/envtest-assets.sh provides them): %w", err)
	}
	return dir, err
}
