package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	celgo "github.com/google/cel-go/cel"
	"github.com/spf13/cobra"

	"k8s.io/client-go/rest"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/katalog"
)

// katalogFlags are the flags every command that reads a katalog takes.
type katalogFlags struct {
	files            []string
	crds             []string
	costLimit        uint64
	runtimeCostLimit uint64
	maxForEach       int
	// strictTotality makes conversions that can fail on valid objects errors.
	strictTotality bool
	// showAcknowledged prints acknowledged findings (check).
	showAcknowledged bool
	// kubeconfig is --kubeconfig of the offline commands; cluster, when set,
	// supplies the configuration of commands that always talk to a cluster.
	kubeconfig string
	cluster    func() (*rest.Config, error)
	// allowOutside is --allow-outside-paths (katalog.Options.AllowOutsidePaths).
	allowOutside bool
	// samplesNeeded is why the command reads every crFiles entry
	// (katalog.Options.SamplesNeeded); "" when it reads none.
	samplesNeeded string
	// collect, when set, receives the diagnostics instead of their text
	// (check --format).
	collect *katalog.Diagnostics
	// overlay is read in place of the files it names (migrate --layout
	// checks the moved katalog before writing it).
	overlay map[string][]byte
}

func (f *katalogFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVarP(&f.files, "katalog", "f", nil, "katalog file or directory (repeatable; documents are merged)")
	cmd.Flags().Uint64Var(&f.costLimit, "max-expression-cost", 0, fmt.Sprintf("static cost limit per expression, estimated from the schema's bounds (default %d)", celengine.DefaultCostLimit))
	cmd.Flags().StringArrayVar(&f.crds, "crd", nil, "CRD manifest file or directory supplying the schema of entries without crdFile (repeatable)")
	cmd.Flags().BoolVar(&f.allowOutside, "allow-outside-paths", false, "let crdFile, crFiles, imports, motifs and include: files name files outside the katalog's repository (the nearest directory above it holding .git; else its own directory)")
	cmd.Flags().Uint64Var(&f.runtimeCostLimit, "max-runtime-cost", 0, fmt.Sprintf("runtime cost limit per expression evaluation (default %d)", celengine.DefaultRuntimeCostLimit))
	cmd.Flags().IntVar(&f.maxForEach, "max-foreach", 0, fmt.Sprintf("most children of one forEach declaration whose fields the schema does not bound (default %d)", engine.DefaultMaxForEach))
	_ = cmd.MarkFlagRequired("katalog")
}

// crdNames takes out of --crd the values that are not files or
// directories: explain reads them as the names of CRDs or entries.
func (f *katalogFlags) crdNames() []string {
	var paths, names []string
	for _, c := range f.crds {
		if _, err := os.Stat(c); err == nil {
			paths = append(paths, c)
		} else {
			names = append(names, c)
		}
	}
	f.crds = paths
	return names
}

// registerKubeconfig adds --kubeconfig to an offline command: the cluster
// is then asked for the CRDs of entries without crdFile.
func (f *katalogFlags) registerKubeconfig(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "read the CRDs of entries without crdFile from this cluster")
}

// loadOptions says where the loader finds CRDs for entries without crdFile.
func (f *katalogFlags) loadOptions() katalog.Options {
	opts := katalog.Options{CRDs: f.crds, AllowOutsidePaths: f.allowOutside, Overlay: f.overlay, SamplesNeeded: f.samplesNeeded}
	config := f.cluster
	if config == nil && f.kubeconfig != "" {
		config = func() (*rest.Config, error) { return kubeconfigFile(f.kubeconfig) }
	}
	if config != nil {
		opts.Fetch = (&clusterCRDs{config: config}).fetch
	}
	return opts
}

// backends builds the CEL environment and the legacy adapter once.
func (f *katalogFlags) backends() (engine.Backends, error) {
	cel, err := celengine.New(celengine.Options{
		CostLimit:        f.costLimit,
		RuntimeCostLimit: f.runtimeCostLimit,
		Libraries:        []celgo.EnvOption{gotmpl.CELLibrary()},
	})
	if err != nil {
		return engine.Backends{}, fmt.Errorf("building the CEL environment: %w", err)
	}
	return engine.Backends{CEL: cel, Legacy: gotmpl.NewWithOptions(cel, gotmpl.Options{RuntimeCostLimit: f.runtimeCostLimit})}, nil
}

// errProblems means the problems were already printed.
var errProblems = errors.New("the katalog has problems")

// compile loads and compiles the katalog, printing warnings and errors (one
// `file:line:col: message` line each) to w.
func (f *katalogFlags) compile(w io.Writer) (*engine.Plan, error) {
	plan, diags, err := f.build()
	if err != nil {
		return nil, err
	}
	f.report(w, diags)
	if plan == nil || diags.HasErrors() {
		return nil, errProblems
	}
	return plan, nil
}

// build loads and compiles the katalog and returns every diagnostic. The
// plan is nil when the katalog does not load; when it compiles with errors
// the plan is returned all the same, for the commands that use what
// compiles (conformance).
func (f *katalogFlags) build() (*engine.Plan, katalog.Diagnostics, error) {
	k, diags := katalog.LoadWith(f.loadOptions(), f.files...)
	if diags.HasErrors() {
		return nil, diags, nil
	}
	b, err := f.backends()
	if err != nil {
		return nil, nil, err
	}
	plan, cdiags := engine.Compile(k, b, engine.CompileOptions{CostLimit: f.costLimit, MaxForEach: f.maxForEach, StrictTotality: f.strictTotality})
	return plan, append(diags, cdiags...), nil
}

// report prints diagnostics to w (or collects them). Acknowledged findings
// are printed by check alone: the katalog has said why it accepts them.
func (f *katalogFlags) report(w io.Writer, diags katalog.Diagnostics) {
	if f.collect != nil {
		*f.collect = append(*f.collect, diags...)
		return
	}
	if !f.showAcknowledged {
		var shown katalog.Diagnostics
		for _, d := range diags {
			if d.Severity != katalog.Acknowledged {
				shown = append(shown, d)
			}
		}
		diags = shown
	}
	printDiagnostics(w, diags)
}

// printDiagnostics prints diagnostics in file and position order.
func printDiagnostics(w io.Writer, diags katalog.Diagnostics) {
	for _, d := range sortedDiagnostics(diags) {
		fmt.Fprintln(w, d.Error())
	}
}

// sortedDiagnostics orders diagnostics by file and position.
func sortedDiagnostics(diags katalog.Diagnostics) katalog.Diagnostics {
	sorted := append(katalog.Diagnostics(nil), diags...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i].Pos, sorted[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return sorted
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "orkestra",
		Short: "Declarative Kubernetes operators and CRD conversion from a katalog",
		Long: `Orkestra runs operators declared in a katalog (YAML): the custom resources,
what each reconciles into, under which conditions, and how objects convert
between the CRD's API versions. Every expression is CEL, compiled and
type-checked against the CRD's schema when the katalog loads.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		newCheckCmd(), newRenderCmd(), newConvertCmd(), newMigrateCmd(),
		newServeCmd(), newRunCmd(), newConformanceCmd(), newManifestsCmd(),
		newDevCmd(), newSimulateCmd(), newE2ECmd(), newStorageCmd(), newVersionsCmd(), newVersionCmd(), newExplainCmd(), newSchemaCmd(),
	)
	return root
}
