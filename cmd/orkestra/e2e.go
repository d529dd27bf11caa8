package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/orkspace/orkestra-cel/controlplane"
	"github.com/orkspace/orkestra-cel/e2e"
	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/webhook"
)

// e2eFlags are `orkestra e2e`'s flags.
type e2eFlags struct {
	files      []string
	kubeconfig string
	runtime    string
	assets     string
	verbosity  int
	katalog    katalogFlags
}

func newE2ECmd() *cobra.Command {
	f := e2eFlags{runtime: "in-process"}
	cmd := &cobra.Command{
		Use:   "e2e -f SPEC… | e2e DIR/...",
		Short: "Run upstream's declarative end-to-end specs (kind: E2E) on a local control plane or a cluster",
		Long: `e2e runs E2E specs (kind: E2E, upstream Orkestra's format): the CRDs and
setup applied, the katalog's operator running, the custom resources applied at
the first cr-applied expectation and deleted at the first cr-deleted one, and
every expectation (resources, commands, the kubectl DSL) polled until it
passes or its timeout.

By default each spec runs on a fresh local control plane (the kube-apiserver
and etcd of orkestra dev), the operator in this process, workloads given the
status their controllers would give them, and a garbage collector deleting the
dependents of deleted owners. --kubeconfig runs on a real cluster instead.

Exit codes: 0 every expectation passed; 1 one failed (what was observed is
shown); 2 a spec (or a file it names) is invalid; 3 an expectation could not
run here (skipped, with the reason) — never counted as passed.`,
		Example: `  orkestra e2e -f examples/website/e2e.yaml
  orkestra e2e ./examples/...
  orkestra e2e -f e2e.yaml --kubeconfig ~/.kube/config`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runE2E(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f, args)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVarP(&f.files, "file", "f", nil, "E2E spec file (repeatable)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "run on the cluster of this kubeconfig instead of a local control plane")
	fs.StringVar(&f.runtime, "runtime", f.runtime, "with --kubeconfig: in-process (start the katalog's operator here) or installed (a runtime installed in the cluster reconciles)")
	fs.StringVar(&f.assets, "assets", "", "directory holding kube-apiserver and etcd for the local control plane (default: $KUBEBUILDER_ASSETS, else hack/envtest-assets.sh)")
	fs.IntVarP(&f.verbosity, "verbosity", "v", -1, "the operator's log verbosity on stderr (-1: no logs, 0: info, 1 and more: debug)")
	fs.StringArrayVar(&f.katalog.crds, "crd", nil, "CRD manifest supplying the schema of katalog entries without crdFile (repeatable; the spec's crd files are used too)")
	fs.BoolVar(&f.katalog.allowOutside, "allow-outside-paths", false, "let the katalog's crdFile, crFiles and imports name files outside its directory")
	return cmd
}

func runE2E(ctx context.Context, stdout, stderr io.Writer, f e2eFlags, args []string) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.runtime != "in-process" && f.runtime != "installed" {
		return fmt.Errorf("--runtime %q: use in-process or installed", f.runtime)
	}
	files, err := specFiles(f.files, args)
	if err != nil {
		return err
	}
	var specs []*e2e.Spec
	var diags katalog.Diagnostics
	for _, file := range files {
		s, d := e2e.Parse(file)
		diags = append(diags, d...)
		specs = append(specs, s)
	}
	printDiagnostics(stderr, diags)
	if diags.HasErrors() {
		fmt.Fprintf(stderr, "%d problem(s): fix the spec(s) above; nothing ran\n", len(diags.Errors()))
		return exitCode(e2e.ExitInvalid)
	}
	log := logr.Discard()
	if f.verbosity >= 0 {
		log = textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(f.verbosity), textlogger.Output(stderr)))
	}
	ctrl.SetLogger(log)
	runner, err := newE2ERunner(ctx, stdout, stderr, f, log)
	if err != nil {
		return err
	}
	code := e2e.ExitPass
	for _, s := range specs {
		res := runner.Run(ctx, s)
		code = worse(code, res.ExitCode())
	}
	if code != e2e.ExitPass {
		return exitCode(code)
	}
	return nil
}

// worse orders exit codes: invalid, failed, skipped, passed.
func worse(a, b int) int {
	rank := map[int]int{e2e.ExitPass: 0, e2e.ExitSkipped: 1, e2e.ExitFail: 2, e2e.ExitInvalid: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

func newE2ERunner(ctx context.Context, stdout, stderr io.Writer, f e2eFlags, log logr.Logger) (*e2e.Runner, error) {
	backends, err := f.katalog.backends()
	if err != nil {
		return nil, err
	}
	t := &e2e.Targets{Kubeconfig: f.kubeconfig, InstalledRuntime: f.runtime == "installed", Operator: e2eOperator(log)}
	if f.kubeconfig == "" {
		if t.Assets, err = controlplane.FindAssets(ctx, f.assets, stderr); err != nil {
			return nil, err
		}
	}
	compile := func(file string, crds []string) (*engine.Plan, error) {
		kf := f.katalog
		kf.files = []string{file}
		kf.crds = append(append([]string(nil), kf.crds...), crds...)
		var collected katalog.Diagnostics
		kf.collect = &collected
		plan, err := kf.compile(io.Discard)
		printDiagnostics(stderr, collected.Warnings())
		if errors.Is(err, errProblems) {
			return nil, collected.Errors()
		}
		return plan, err
	}
	return &e2e.Runner{Out: stdout, Compile: compile, Backends: backends, Connect: t.Connect}, nil
}

// e2eOperator runs the operator as orkestra dev does: no leader election.
func e2eOperator(log logr.Logger) controlplane.RunFunc {
	return func(ctx context.Context, cfg *rest.Config, plan *engine.Plan, serving webhook.Config) error {
		return runOperator(ctx, cfg, plan, serving, runFlags{gracefulShutdown: 5 * time.Second, skipNameValidation: true, storageMigration: true, migrationQPS: defaultMigrationQPS}, log)
	}
}

// specFiles are the -f files, then the arguments: spec files, or DIR/...
// for every spec below DIR (e2e.Discover).
func specFiles(files, args []string) ([]string, error) {
	out := append([]string(nil), files...)
	for _, a := range args {
		root, recursive := strings.CutSuffix(a, "/...")
		if !recursive {
			out = append(out, a)
			continue
		}
		if root == "" {
			root = "."
		}
		found, err := e2e.Discover(root)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	if len(out) == 0 {
		return nil, errors.New("no spec: give -f SPEC, or DIR/... for every *e2e*.yaml declaring kind: E2E below DIR")
	}
	return out, nil
}
