package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/conversion"
	"github.com/orkspace/orkestra-cel/katalogapi"
	"github.com/orkspace/orkestra-cel/lifecycle/storage"
	"github.com/orkspace/orkestra-cel/manifests"
	"github.com/orkspace/orkestra-cel/operator"
	"github.com/orkspace/orkestra-cel/webhook"
	"github.com/orkspace/orkestra-cel/webhook/certs"
)

// runFlags are `orkestra run`'s own flags.
type runFlags struct {
	kubeconfig              string
	namespace               string
	leaderElect             bool
	leaderElectionID        string
	leaderElectionNamespace string
	gracefulShutdown        time.Duration
	logVerbosity            int
	// builtinCerts, when set, runs the built-in certificate mode (no
	// --tls-cert given): a shared Secret, files for the webhook server, the
	// CRDs' caBundle.
	builtinCerts *certs.Options
	// storageMigration runs the storage migration controller on the leader.
	storageMigration bool
	migrationQPS     float64
	builtinTimeout   time.Duration
	// withoutPolicies runs without applying the katalog's admission
	// policies (a cluster without the APIs; the rules are then not enforced).
	withoutPolicies bool
	// skipNameValidation lets one process start the operator more than once
	// (orkestra dev is run repeatedly by its tests); controller-runtime
	// otherwise refuses a second controller of the same name.
	skipNameValidation bool
	// external says where the katalog's external calls may go.
	external externalFlags
}

func newRunCmd() *cobra.Command {
	var kf katalogFlags
	serving := webhook.DefaultConfig()
	certOpts := certs.DefaultOptions()
	rf := runFlags{leaderElect: true, gracefulShutdown: 30 * time.Second, storageMigration: true, migrationQPS: defaultMigrationQPS, builtinTimeout: 30 * time.Second}
	cmd := &cobra.Command{
		Use:   "run -f KATALOG",
		Short: "Run the operator: reconcilers, the /convert webhook, metrics and health",
		Long: `run is the operator. For every enabled katalog entry that reconciles (per
CRD, the entry of its storage version) it starts a controller with the
entry's workers, reconciling custom resources into the children the katalog
declares; the other entries of a CRD only watch and count their resources.
Beside them it serves everything ` + "`orkestra serve`" + ` serves: the HTTPS /convert
webhook, /metrics (conversion and reconcile metrics), /healthz, /readyz and
/katalog with each entry's workers, active workers, resource count and health.

Without --tls-cert/--tls-key (or TLS_CERT/TLS_KEY) the webhook's certificate
is issued and rotated by the built-in mode: a CA and serving certificate in
the Secret --cert-secret shared by every replica, written to --cert-dir, and
the CA bundle kept in the katalog's CRDs.

The cluster is reached through --kubeconfig, else $KUBECONFIG, else the
in-cluster service account, else ~/.kube/config. With leader election (the
default) only the elected replica reconciles; every replica serves /convert.
The leader also keeps the katalog's CRDs migrated: when status.storedVersions
lists a version other than the storage version, every object is rewritten at
the storage version and storedVersions pruned (--storage-migration).
SIGTERM stops the reconcilers and lets in-flight requests finish.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			kf.cluster = rf.restConfig
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
			if err := rf.external.refuse(plan); err != nil {
				return err
			}
			serving.Complete(os.Getenv)
			if serving.CertFile == "" && serving.KeyFile == "" {
				// No certificate given: the built-in mode issues one.
				certOpts.Complete(os.Getenv)
				serving.CertFile, serving.KeyFile = certOpts.Files()
				rf.builtinCerts = &certOpts
			}
			if err := serving.Validate(); err != nil {
				return err
			}
			log := textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(rf.logVerbosity), textlogger.Output(cmd.ErrOrStderr())))
			ctrl.SetLogger(log)
			cfg, err := rf.restConfig()
			if err != nil {
				return err
			}
			return runOperator(ctrl.SetupSignalHandler(), cfg, plan, serving, rf, log)
		},
	}
	kf.register(cmd)
	serving.AddFlags(cmd.Flags())
	certOpts.AddFlags(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVar(&rf.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster config, ~/.kube/config)")
	fs.StringVar(&rf.namespace, "namespace", "", "watch custom resources and children in this namespace only (default: all namespaces)")
	fs.BoolVar(&rf.leaderElect, "leader-elect", rf.leaderElect, "elect a leader among replicas; only the leader reconciles")
	fs.StringVar(&rf.leaderElectionID, "leader-election-id", "", "name of the leader election Lease (default: orkestra-<katalog name>)")
	fs.StringVar(&rf.leaderElectionNamespace, "leader-election-namespace", "", "namespace of the Lease (default: the pod's namespace in a cluster, else --namespace, else default)")
	fs.DurationVar(&rf.gracefulShutdown, "graceful-shutdown-timeout", rf.gracefulShutdown, "how long running reconciles may finish after SIGTERM")
	fs.IntVarP(&rf.logVerbosity, "verbosity", "v", 0, "log verbosity (0: info, 1 and more: debug)")
	fs.BoolVar(&rf.withoutPolicies, "without-admission-policies", false, "do not apply the katalog's admission rules as API-server policies (for a cluster without admissionregistration.k8s.io/v1 policies); the rules are then not enforced")
	fs.BoolVar(&rf.storageMigration, "storage-migration", rf.storageMigration, "on the leader, migrate stored objects of the katalog's CRDs to their storage version whenever status.storedVersions lists another version, then prune storedVersions")
	fs.Float64Var(&rf.migrationQPS, "storage-migration-qps", rf.migrationQPS, "object writes per second of a storage migration (0: unbounded)")
	fs.DurationVar(&rf.builtinTimeout, "storage-migration-builtin-timeout", rf.builtinTimeout, "how long a StorageVersionMigration (the cluster's built-in migrator) may take to show progress before Orkestra rewrites the objects itself (0: never use the built-in migrator)")
	rf.external.register(fs)
	fs.BoolVar(&rf.external.deny, "deny-external", false, "refuse a katalog that declares external: calls (HTTP calls outside the cluster)")
	return cmd
}

// kubeconfigFile loads a kubeconfig file.
func kubeconfigFile(path string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("loading --kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// defaultMigrationQPS bounds the writes of a storage migration by default.
const defaultMigrationQPS = 100

// restConfig loads the cluster configuration the standard way. Requests are
// not throttled on the client, whatever the source (controller-runtime's
// loader does the same for the others): the API server's priority and
// fairness limits them, and client-go's default of 5 a second would hold
// convergence of a thousand custom resources for minutes.
func (rf *runFlags) restConfig() (*rest.Config, error) {
	if rf.kubeconfig != "" {
		cfg, err := kubeconfigFile(rf.kubeconfig)
		if err == nil && cfg.QPS == 0 && cfg.RateLimiter == nil {
			cfg.QPS = -1
		}
		return cfg, err
	}
	cfg, err := ctrlconfig.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("no cluster configuration: pass --kubeconfig FILE, set KUBECONFIG, or run in a pod: %w", err)
	}
	return cfg, nil
}

func (rf *runFlags) leaseNamespace() string {
	if rf.leaderElectionNamespace != "" {
		return rf.leaderElectionNamespace
	}
	if ns := certs.InClusterNamespace(); ns != "" {
		return ns
	}
	if rf.namespace != "" {
		return rf.namespace
	}
	return "default"
}

// runOperator runs the manager (reconcilers, informers, leader election) and
// the serving endpoints until ctx is cancelled.
func runOperator(ctx context.Context, cfg *rest.Config, plan *engine.Plan, serving webhook.Config, rf runFlags, log logr.Logger) error {
	id := rf.leaderElectionID
	if id == "" {
		id = manifests.LeaseName(plan)
	}
	mgr, err := operator.NewManager(cfg, plan, operator.ManagerOptions{
		Namespace:                    rf.namespace,
		LeaderElection:               rf.leaderElect,
		LeaderElectionID:             id,
		LeaderElectionNamespace:      rf.leaseNamespace(),
		GracefulShutdownTimeout:      rf.gracefulShutdown,
		Log:                          log,
		SkipControllerNameValidation: rf.skipNameValidation,
	})
	if err != nil {
		return fmt.Errorf("creating the controller manager: %w", err)
	}
	if rf.builtinCerts != nil {
		opts := *rf.builtinCerts
		opts.Log = log.WithName("certs")
		if _, err := certs.Setup(ctx, cfg, plan, opts, mgr); err != nil {
			return fmt.Errorf("built-in webhook certificates: %w", err)
		}
	}
	if err := applyAdmission(ctx, cfg, mgr, plan, rf.withoutPolicies, log); err != nil {
		return err
	}
	calls, err := rf.external.client()
	if err != nil {
		return err
	}
	op := operator.New(plan, operator.Options{Log: log.WithName("operator"), SkipControllerNameValidation: rf.skipNameValidation, External: calls})
	if err := op.SetupWithManager(mgr); err != nil {
		return err
	}
	rt := operatorRuntime{op: op, plan: plan}
	if rf.storageMigration {
		rt.storage, err = storage.NewController(cfg, storage.ControllerOptions{
			CRDs:     plan.CRDNames(),
			Migrator: storage.Options{QPS: rf.migrationQPS, BuiltinTimeout: rf.builtinTimeout},
			Registry: ctrlmetrics.Registry,
			Recorder: mgr.GetEventRecorder(operator.EventReporter),
			Log:      log.WithName("storage"),
		})
		if err != nil {
			return fmt.Errorf("storage migration: %w", err)
		}
		if err := mgr.Add(rt.storage); err != nil {
			return err
		}
	}
	srv := &webhook.Server{
		Config:     serving,
		Plan:       plan,
		Converter:  conversion.New(plan, conversion.Options{}),
		Runtime:    rt,
		Resources:  op,
		Registry:   ctrlmetrics.Registry,
		ReadyCheck: op.Ready,
		Log:        log.WithName("webhook"),
	}
	// The webhook serves on every replica, leader or not.
	if err := mgr.Add(servingRunnable{srv}); err != nil {
		return err
	}
	log.Info("starting", "katalog", plan.Katalog.File, "entries", len(plan.Entries), "namespace", orAll(rf.namespace), "leaderElection", rf.leaderElect, "lease", id)
	return mgr.Start(ctx)
}

func orAll(ns string) string {
	if ns == "" {
		return "(all)"
	}
	return ns
}

// servingRunnable runs the webhook server inside the manager, outside
// leader election.
type servingRunnable struct{ srv *webhook.Server }

func (s servingRunnable) Start(ctx context.Context) error { return s.srv.Run(ctx) }
func (s servingRunnable) NeedLeaderElection() bool        { return false }

// operatorRuntime gives the /katalog API the operator's per-entry status
// and the storage state of the entry's CRD.
type operatorRuntime struct {
	op      *operator.Operator
	plan    *engine.Plan
	storage *storage.Controller // nil: storage migration off
}

func (r operatorRuntime) Entry(name string) (webhook.EntryRuntime, bool) {
	st, ok := r.op.Entry(name)
	if !ok {
		return webhook.EntryRuntime{}, false
	}
	out := webhook.EntryRuntime{
		Workers:             st.Workers,
		WorkersActive:       st.WorkersActive,
		ResourceCount:       st.ResourceCount,
		Started:             st.Started,
		Pending:             st.Pending,
		Healthy:             st.Healthy,
		QueueDepth:          st.QueueDepth,
		StartedAt:           st.StartedAt,
		TotalReconciles:     st.TotalReconciles,
		FailedReconciles:    st.FailedReconciles,
		ConsecutiveFailures: st.ConsecutiveFailures,
		LastError:           st.LastError,
		LastReconcile:       st.LastReconcile,
		Gated:               st.Gated,
		GatedReason:         st.GatedReason,
	}
	for _, d := range st.Dependencies {
		out.Dependencies = append(out.Dependencies, webhook.DependencyRuntime{Entry: d.Entry, Condition: d.Condition, State: d.State, Satisfied: d.Satisfied})
	}
	if e := r.plan.Entry(name); r.storage != nil && e != nil && e.Source.CRD != nil {
		if s, ok := r.storage.Status(e.Source.CRD.Object.Name); ok {
			out.Storage = &katalogapi.StorageStatus{StoredVersions: s.StoredVersions, Migrating: s.Migrating, Migrated: s.Migrated, LastError: s.LastError}
			if s.Remaining >= 0 {
				out.Storage.Remaining = &s.Remaining
			}
		}
	}
	return out, true
}

// startGate refuses to start a deprecated katalog that nothing accepts, as
// upstream's ork run does (katalog.StartGate).
func startGate(stderr io.Writer, plan *engine.Plan) error {
	if err := plan.Katalog.StartGate(time.Now()); err != nil {
		fmt.Fprintln(stderr, err)
		return exitCode(1)
	}
	return nil
}
