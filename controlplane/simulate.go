package controlplane

import (
	"context"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/orkspace/orkestra-cel/operator"
	"github.com/orkspace/orkestra-cel/workloads"
)

// SimulateWorkloads gives workloads the status a kubelet and Kubernetes'
// controllers would give them (the workloads package's live mode), until
// ctx is done: Deployments become available, Jobs complete, Pods run,
// claims bind. It runs its own controller manager beside the operator's.
func SimulateWorkloads(ctx context.Context, cfg *rest.Config) error {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 operator.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	if err := workloads.Setup(mgr, workloads.Options{}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
