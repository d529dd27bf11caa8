package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orkspace/orkestra-cel/controlplane"
	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/lifecycle/crdspec"
)

// Targets decides where specs run: the cluster of --kubeconfig, a kind
// cluster when a spec asks for one and kind is on PATH, else the local
// control plane (a fresh one per spec).
type Targets struct {
	// Kubeconfig, when set, is the cluster every spec runs on.
	Kubeconfig string
	// InstalledRuntime: on a real cluster an installed runtime reconciles;
	// none is started in this process.
	InstalledRuntime bool
	// Assets hold kube-apiserver and etcd for the local control plane.
	Assets string
	// Operator runs a katalog's operator in this process.
	Operator controlplane.RunFunc
}

// Connect is a Connector.
func (t *Targets) Connect(ctx context.Context, s *Spec, out io.Writer) (*Cluster, error) {
	switch {
	case t.Kubeconfig != "":
		return t.existing(t.Kubeconfig, "the cluster of --kubeconfig "+t.Kubeconfig, false)
	case s.Cluster.Provider == "existing":
		path := os.Getenv("KUBECONFIG")
		if path == "" {
			path = clientcmd.RecommendedHomeFile
		}
		return t.existing(path, "the current cluster ("+path+")", false)
	case s.Cluster.Provider == "kind":
		if _, err := exec.LookPath("kind"); err == nil {
			return t.kind(ctx, s, out)
		}
		fmt.Fprintln(out, "→ cluster.provider kind: kind is not on PATH; running on the local control plane instead")
	}
	return t.local(ctx, out)
}

// local starts a local control plane with simulated workloads and the
// garbage collector running beside it: what a cluster's kubelets and
// controllers do that the operator's behaviour depends on.
func (t *Targets) local(ctx context.Context, out io.Writer) (*Cluster, error) {
	dir, err := os.MkdirTemp("", "orkestra-e2e-")
	if err != nil {
		return nil, err
	}
	cp, err := controlplane.Start(ctx, t.Assets, dir, out)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	bg, stopBG := context.WithCancel(ctx)
	var wg sync.WaitGroup
	run := func(f func(context.Context) error) {
		wg.Add(1)
		go func() { defer wg.Done(); _ = f(bg) }()
	}
	run(controlplane.NewGarbageCollector(cp.Config).Run)
	run(func(ctx context.Context) error { return controlplane.SimulateWorkloads(ctx, cp.Config) })
	c, err := t.inProcess(cp.Config, cp.Kubeconfig, dir, "the local control plane ("+cp.Config.Host+")", false)
	if err != nil {
		stopBG()
		return nil, errors.Join(err, cp.Stop(), os.RemoveAll(dir))
	}
	c.NoNodes, c.Owned = true, true
	c.Close = func() error {
		stopBG()
		wg.Wait()
		return errors.Join(cp.Stop(), os.RemoveAll(dir))
	}
	return c, nil
}

// existing is a cluster reached through a kubeconfig file.
func (t *Targets) existing(path, where string, remote bool) (*Cluster, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig %s: %w", path, err)
	}
	if t.InstalledRuntime {
		return &Cluster{Config: cfg, Kubeconfig: path, Where: where + ", the installed runtime reconciling"}, nil
	}
	dir, err := os.MkdirTemp("", "orkestra-e2e-")
	if err != nil {
		return nil, err
	}
	c, err := t.inProcess(cfg, path, dir, where, remote || !loopback(cfg.Host))
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	c.Close = func() error { return os.RemoveAll(dir) }
	return c, nil
}

// inProcess gives a cluster the runtime of this process: the katalog's
// CRDs converting through its webhook, and its operator. remote: the API
// server cannot reach 127.0.0.1 of this machine, so a CRD needing the
// webhook cannot be installed.
func (t *Targets) inProcess(cfg *rest.Config, kubeconfig, dir, where string, remote bool) (*Cluster, error) {
	wh, err := controlplane.NewWebhook(dir, 0)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Config: cfg, Kubeconfig: kubeconfig, Where: where + ", the operator running in process"}
	c.InstallCRDs = func(ctx context.Context, plan *engine.Plan) error {
		if remote {
			if name := webhookCRD(plan, wh); name != "" {
				return fmt.Errorf("the CRD %s converts through the webhook, which the API server of %s cannot reach in this process (https://%s): install the runtime in the cluster (orkestra manifests) and run with --runtime installed", name, where, wh.Addr)
			}
		}
		_, err := controlplane.InstallCRDs(ctx, cfg, plan, wh)
		return err
	}
	c.StartOperator = func(ctx context.Context, plan *engine.Plan) (string, func() error, error) {
		port, err := controlplane.FreePort()
		if err != nil {
			return "", nil, err
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		op, err := controlplane.StartOperator(ctx, cfg, plan, wh, addr, t.Operator)
		if err != nil {
			return "", nil, err
		}
		return addr, op.Stop, nil
	}
	return c, nil
}

// webhookCRD names a CRD of plan whose conversion needs the webhook.
func webhookCRD(plan *engine.Plan, wh *controlplane.Webhook) string {
	for _, e := range plan.Entries {
		if src := e.Source.CRD; src != nil && src.Object != nil {
			if _, s := crdspec.Spec(plan, src, apiextensionsv1.WebhookClientConfig{URL: &wh.URL, CABundle: wh.CAPEM}); s == crdspec.Webhook {
				return src.Object.Name
			}
		}
	}
	return ""
}

func loopback(host string) bool {
	u, err := url.Parse(host)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// kind runs on a kind cluster: the spec's cluster.name (default ork-e2e),
// recreated unless reuse: true and it exists; deleted at the end unless
// reuse.
func (t *Targets) kind(ctx context.Context, s *Spec, out io.Writer) (*Cluster, error) {
	name := s.Cluster.Name
	if name == "" {
		name = "ork-e2e"
	}
	kindCmd := func(args ...string) ([]byte, error) {
		b, err := exec.CommandContext(ctx, "kind", args...).CombinedOutput()
		if err != nil {
			return b, fmt.Errorf("kind %s: %w\n%s", strings.Join(args, " "), err, b)
		}
		return b, nil
	}
	list, err := kindCmd("get", "clusters")
	if err != nil {
		return nil, err
	}
	exists := false
	for _, l := range strings.Fields(string(list)) {
		exists = exists || l == name
	}
	if exists && !s.Cluster.Reuse {
		fmt.Fprintf(out, "→ recreating kind cluster %s (reuse: false)\n", name)
		if _, err := kindCmd("delete", "cluster", "--name", name); err != nil {
			return nil, err
		}
		exists = false
	}
	if !exists {
		fmt.Fprintf(out, "→ creating kind cluster %s\n", name)
		if _, err := kindCmd("create", "cluster", "--name", name); err != nil {
			return nil, err
		}
	}
	kc, err := kindCmd("get", "kubeconfig", "--name", name)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "orkestra-e2e-kind-")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		return nil, err
	}
	c, err := t.existing(path, "kind cluster "+name, true)
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	closeInner := c.Close
	c.Owned = !s.Cluster.Reuse
	c.Close = func() error {
		var errs []error
		if closeInner != nil {
			errs = append(errs, closeInner())
		}
		if !s.Cluster.Reuse {
			_, err := exec.Command("kind", "delete", "cluster", "--name", name).CombinedOutput()
			errs = append(errs, err)
		}
		return errors.Join(append(errs, os.RemoveAll(dir))...)
	}
	return c, nil
}
