package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/envassets"
	"github.com/orkspace/orkestra-cel/operator/external"
	"github.com/orkspace/orkestra-cel/simulate"
)

func newSimulateCmd() *cobra.Command {
	var files, skip []string
	var o simulate.Options
	var allowOutside bool
	cmd := &cobra.Command{
		Use:   "simulate [-f SPEC]… [PATH|DIR/...]…",
		Short: "Run Simulate specs: the katalog's reconcilers, cycle by cycle, against a cluster held in memory",
		Long: `simulate runs Simulate specs (kind: Simulate, upstream Orkestra's
simulate.yaml): the katalog's real reconcilers, compiled as orkestra check
compiles them, reconcile the spec's custom resources cycles times against a
cluster held in memory (--envtest: a real kube-apiserver and etcd). Every
client call is recorded as an op; each cycle's writes are printed, the
spec's expectations (steady state, no errors, ops that must and must not
happen) are checked.

Specs are given with -f (repeatable) or as arguments; DIR/... (./... for
the current directory) runs every simulate.yaml and simulate-*.yaml below
DIR. A suite (imports:) runs the specs it imports.

Exit status: 0 when every spec passed, 1 when an expectation failed (the
rule and the ops of its cycle are printed), 2 when a spec is invalid (each
problem as file:line:col with what to fix).`,
		Example: `  orkestra simulate -f examples/website/simulate.yaml
  orkestra simulate ./...
  orkestra simulate --envtest -f examples/website/simulate.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			paths, err := specPaths(files, args, skip)
			if err != nil {
				return err
			}
			if len(paths) == 0 {
				return fmt.Errorf("no spec given: name one with -f SPEC, or DIR/... to run every simulate.yaml below DIR")
			}
			// The reconcilers log through controller-runtime; the report
			// is the output.
			logf.SetLogger(logr.Discard())
			ctrl.SetLogger(logr.Discard())
			o.Out = cmd.OutOrStdout()
			o.Compile = func(w io.Writer, katalog string, crds []string) (*engine.Plan, error) {
				kf := katalogFlags{files: []string{katalog}, crds: crds, allowOutside: allowOutside}
				return kf.compile(w)
			}
			if o.Envtest {
				if o.Assets, err = simulateAssets(cmd, o.Assets); err != nil {
					return err
				}
			}
			return runSpecs(cmd, paths, o)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVarP(&files, "file", "f", nil, "Simulate spec file (repeatable)")
	fs.BoolVar(&o.Envtest, "envtest", false, "run against a kube-apiserver and etcd instead of the in-memory cluster")
	fs.StringVar(&o.Assets, "assets", "", "with --envtest: directory holding kube-apiserver and etcd (default: $KUBEBUILDER_ASSETS, else hack/envtest-assets.sh)")
	fs.IntVar(&o.Cycles, "cycles", 0, "reconcile cycles, overriding each spec's cycles (default: the spec's, else 10)")
	fs.BoolVar(&allowOutside, "allow-outside-paths", false, "let a spec's katalog name files (crdFile, crFiles, imports) outside its directory, as every command that reads a katalog may")
	fs.StringArrayVar(&skip, "skip", nil, "with DIR/...: skip paths containing this text (repeatable)")
	var ef externalFlags
	ef.register(fs)
	fs.BoolVar(&ef.skip, "skip-external", false, "make no external: call: every call reads as not called (external.<name>.called false), as when its condition does not hold; a spec's skipExternal: true does the same for that spec")
	cmd.PreRunE = func(*cobra.Command, []string) error {
		allow, err := external.ParseAllow(ef.allow)
		o.External = external.Options{Allow: allow, Skip: ef.skip}
		return err
	}
	return cmd
}

// specPaths are the spec files of -f and the arguments, DIR/... expanded.
func specPaths(files, args, skip []string) ([]string, error) {
	out := append([]string(nil), files...)
	for _, a := range args {
		dir, ok := strings.CutSuffix(a, "...")
		if !ok {
			out = append(out, a)
			continue
		}
		dir = filepath.Clean(strings.TrimSuffix(dir, "/"))
		if dir == "" {
			dir = "."
		}
		found, err := simulate.Discover(dir, skip)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}

// runSpecs runs every spec and ends with the worst exit status.
func runSpecs(cmd *cobra.Command, paths []string, o simulate.Options) error {
	counts := map[simulate.Outcome]int{}
	for _, l := range simulate.Load(paths...) {
		outcome := simulate.Invalid
		if l.Err != nil {
			fmt.Fprintf(o.Out, "── %s\n%v\n  INVALID\n\n", l.File, l.Err)
		} else {
			var err error
			outcome, err = simulate.RunSpec(cmd.Context(), l.Spec, o)
			if err != nil {
				fmt.Fprintf(o.Out, "%s: %v\n  FAIL\n\n", l.File, err)
				outcome = simulate.Failed
			}
		}
		counts[outcome]++
	}
	fmt.Fprintf(o.Out, "%d passed, %d failed, %d invalid\n", counts[simulate.Passed], counts[simulate.Failed], counts[simulate.Invalid])
	switch {
	case counts[simulate.Invalid] > 0:
		return exitCode(2)
	case counts[simulate.Failed] > 0:
		return exitCode(1)
	}
	return nil
}

// simulateAssets finds kube-apiserver and etcd for --envtest as orkestra dev
// finds them.
func simulateAssets(cmd *cobra.Command, flag string) (string, error) {
	var starts []string
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	dir, err := envassets.Find(cmd.Context(), flag, cmd.ErrOrStderr(), starts...)
	if errors.Is(err, envassets.ErrNotFound) {
		return "", fmt.Errorf("--envtest: no kube-apiserver and etcd: pass --assets DIR or set KUBEBUILDER_ASSETS to a directory holding both, or run inside the orkestra repository (hack/envtest-assets.sh provides them): %w", err)
	}
	return dir, err
}
