package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/controlplane"
	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/lifecycle/crdspec"
	"github.com/orkspace/orkestra-cel/operator"
	"github.com/orkspace/orkestra-cel/operator/render"
	"github.com/orkspace/orkestra-cel/webhook"
)

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
	// simulateWorkloads gives workloads the status a kubelet and the
	// built-in controllers would (the workloads package).
	simulateWorkloads bool
	// external says where the katalog's external calls may go.
	external externalFlags
}

func newDevCmd() *cobra.Command {
	kf := katalogFlags{samplesNeeded: "orkestra dev applies every crFiles entry"}
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
the API server does: Deployments, Services, status, conversion. With
--simulate-workloads, workloads get the status their controllers would give
them: Deployments become available, Jobs complete, Pods run, claims bind. A
garbage collector deletes the children of deleted custom resources and empties
deleted namespaces, as on a cluster. Ctrl-C stops everything; the control
plane's data is discarded.

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
			if err := startGate(cmd.ErrOrStderr(), plan); err != nil {
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
	fs.BoolVar(&df.simulateWorkloads, "simulate-workloads", false, "give Deployments, StatefulSets, ReplicaSets, DaemonSets, Jobs, Pods and PVCs the status a kubelet and Kubernetes' controllers would (a second after creation): available replicas, completed Jobs, running Pods, bound claims")
	df.external.register(fs)
	return cmd
}

// devSession is a running `orkestra dev`.
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
	simulated  bool
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

	assets, err := controlplane.FindAssets(ctx, df.assets, stderr)
	if err != nil {
		return err
	}
	s := &devSession{dir: df.dir, httpAddr: df.httpAddr, simulated: df.simulateWorkloads}
	if s.dir == "" {
		if s.dir, err = os.MkdirTemp("", "orkestra-dev-"); err != nil {
			return err
		}
		defer os.RemoveAll(s.dir)
	} else if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}

	cluster, err := controlplane.Start(ctx, assets, s.dir, stderr)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, cluster.Stop()) }()
	s.cfg, s.kubeconfig = cluster.Config, cluster.Kubeconfig

	wh, err := controlplane.NewWebhook(s.dir, df.webhookPort)
	if err != nil {
		return err
	}
	s.webhookURL = wh.URL
	installed, err := controlplane.InstallCRDs(ctx, s.cfg, plan, wh)
	if err != nil {
		return err
	}
	s.crds, s.strategies = installed.CRDs, installed.Strategies
	// What a cluster's kube-controller-manager does that deleting depends
	// on: the children of a deleted custom resource go, and so does what a
	// deleted namespace holds.
	gc := make(chan error, 1)
	gcCtx, stopGC := context.WithCancel(ctx)
	go func() { gc <- controlplane.NewGarbageCollector(s.cfg).Run(gcCtx) }()
	defer func() {
		stopGC()
		err = errors.Join(err, <-gc)
	}()
	if df.simulateWorkloads {
		sim := make(chan error, 1)
		simCtx, stopSim := context.WithCancel(ctx)
		go func() { sim <- controlplane.SimulateWorkloads(simCtx, s.cfg) }()
		defer func() {
			stopSim()
			err = errors.Join(err, <-sim)
		}()
	}

	// The operator, as `orkestra run` runs it (no leader election: one process).
	op, err := controlplane.StartOperator(ctx, s.cfg, plan, wh, df.httpAddr, devOperator(df, log))
	if err != nil {
		return err
	}
	if len(objs) > 0 {
		s.samples = objs
		c, err := client.New(s.cfg, client.Options{Scheme: operator.Scheme()})
		if err == nil {
			s.applied, err = controlplane.Apply(ctx, c, objs)
		}
		if err != nil {
			return errors.Join(err, op.Stop())
		}
	}
	printDevSession(stdout, plan, s)
	if ready != nil {
		ready(s)
	}
	select {
	case <-op.Done():
		return op.Err()
	case <-ctx.Done():
	}
	fmt.Fprintln(stderr, "stopping…")
	return op.Stop()
}

// devOperator runs the operator as `orkestra run` does, without leader
// election (one process).
func devOperator(df devFlags, log logr.Logger) controlplane.RunFunc {
	return func(ctx context.Context, cfg *rest.Config, plan *engine.Plan, serving webhook.Config) error {
		return runOperator(ctx, cfg, plan, serving, runFlags{gracefulShutdown: 5 * time.Second, skipNameValidation: true, storageMigration: df.storageMigration, migrationQPS: defaultMigrationQPS, external: df.external}, log)
	}
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
	if s.simulated {
		fmt.Fprintln(w, "\nWorkloads: simulated — Deployments, StatefulSets, ReplicaSets and DaemonSets become available, Jobs complete, Pods run, claims bind, a second after creation")
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
