// Package controlplane owns the local control plane `orkestra dev` and
// `orkestra e2e` run on: the kube-apiserver and etcd that envtest uses (no
// kubelet, no nodes, no kube-controller-manager), a kubeconfig for it, the
// katalog's CRDs installed converting through this process's /convert
// webhook, and the operator running in this process.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/orkspace/orkestra-cel/envassets"
)

// ServiceCIDR is the local API server's Service range: 65534 Services
// (envtest's default, a /24, fails past 253).
const ServiceCIDR = "10.0.0.0/16"

// FieldManager owns what the local control plane's users apply.
const FieldManager = "orkestra-dev"

// Cluster is a running local control plane.
type Cluster struct {
	// Config reaches the API server as a member of system:masters.
	Config *rest.Config
	// Kubeconfig is the file holding the same credentials, for kubectl.
	Kubeconfig string
	env        *envtest.Environment
}

// Start starts kube-apiserver and etcd from assets and writes a kubeconfig
// for them into dir.
func Start(ctx context.Context, assets, dir string, progress io.Writer) (*Cluster, error) {
	fmt.Fprintln(progress, "starting kube-apiserver and etcd from", assets, "…")
	env := &envtest.Environment{BinaryAssetsDirectory: assets}
	env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", ServiceCIDR)
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting the local control plane (kube-apiserver and etcd in %s): %w", assets, err)
	}
	c := &Cluster{Config: cfg, env: env}
	if err := c.writeKubeconfig(dir); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

func (c *Cluster) writeKubeconfig(dir string) error {
	user, err := c.env.AddUser(envtest.User{Name: "orkestra-dev", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return err
	}
	c.Kubeconfig = filepath.Join(dir, "kubeconfig")
	return os.WriteFile(c.Kubeconfig, kc, 0o600)
}

// Stop stops the API server and etcd; their data is discarded.
func (c *Cluster) Stop() error {
	if err := c.env.Stop(); err != nil {
		return fmt.Errorf("stopping the local control plane: %w", err)
	}
	return nil
}

// FindAssets finds kube-apiserver and etcd: flag, $KUBEBUILDER_ASSETS, else
// the hack/envtest-assets.sh of the checkout around the working directory or
// the binary (which provides them once, showing its progress).
func FindAssets(ctx context.Context, flag string, progress io.Writer) (string, error) {
	var starts []string
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	dir, err := envassets.Find(ctx, flag, progress, starts...)
	if errors.Is(err, envassets.ErrNotFound) {
		return "", fmt.Errorf("no kube-apiserver and etcd for the local control plane: pass --assets DIR or set KUBEBUILDER_ASSETS to a directory holding both, or run orkestra inside the orkestra repository (hack/envtest-assets.sh provides them): %w", err)
	}
	return dir, err
}
