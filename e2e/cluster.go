package e2e

import (
	"context"
	"io"

	"k8s.io/client-go/rest"

	"github.com/orkspace/orkestra-cel/engine"
)

// Cluster is where one spec runs.
type Cluster struct {
	Config *rest.Config
	// Kubeconfig is exported to commands as KUBECONFIG.
	Kubeconfig string
	// Where describes it in the output.
	Where string
	// NoNodes: no container ever runs here.
	NoNodes bool
	// Owned: the cluster goes away with the run, so nothing applied needs
	// to be removed at the end.
	Owned bool
	// InstallCRDs installs the katalog's CRDs; nil where an installed
	// runtime owns them.
	InstallCRDs func(ctx context.Context, plan *engine.Plan) error
	// StartOperator starts the katalog's operator in this process and
	// returns the address of its HTTP API; nil where an installed runtime
	// reconciles.
	StartOperator func(ctx context.Context, plan *engine.Plan) (httpAddr string, stop func() error, err error)
	// Close releases the cluster.
	Close func() error
}

// Connector provides the cluster a spec runs on, printing what it does.
type Connector func(ctx context.Context, s *Spec, progress io.Writer) (*Cluster, error)
