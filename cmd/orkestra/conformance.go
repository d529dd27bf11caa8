package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/orkspace/orkestra-cel/conformance"
)

func newConformanceCmd() *cobra.Command {
	kf := katalogFlags{samplesNeeded: "conformance round-trips every crFiles entry"}
	var (
		apiserver bool
		junit     string
		count     int
		seed      int64
		apiCount  int
		assets    string
		golden    []string
		timeout   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "conformance -f KATALOG [--apiserver] [--junit FILE] [--count N] [--seed S] [OBJECT.yaml…]",
		Short: "Prove a katalog's conversions correct: static checks, round trips, the /convert protocol, a real API server",
		Long: `conformance runs the conformance suite on a katalog and prints one line per
check (PASS or FAIL, the check, its counts, how long it took) and a summary.
It exits 1 when any check fails; a failure shows the smallest object found
that breaks the check and the field that differs. Every group runs on what
compiles, so one run lists every failure: a problem in static/compile fails
the run, and the other checks still run (a CRD whose conversion does not
compile is left out of them).

  static     the katalog compiles as check --strict compiles it (no
             conversion can fail on an object its source schema accepts,
             unless its path declares mayFail); every pair of served
             versions has a conversion route; literals and every conversion
             output validate against the target version's schema
  roundtrip  A→B→A gives A back exactly, for every pair of served versions,
             over the katalog's sample objects (crFiles), the OBJECT files
             given, and --count objects per version generated from the
             schema (--seed picks them: the same seed gives the same
             objects); an edit at B wins over what the stash holds
  protocol   the real /convert handler: ConversionReview v1 and v1beta1,
             uid, order, apiVersion, metadata rules, failures, bad requests
  apiserver  (--apiserver) kube-apiserver and etcd call /convert over TLS:
             every verb through every served version, reads at every other
             version compared with the offline conversion, a storage
             version switch, labels/annotations, status and scale, with
             conversionReviewVersions ["v1","v1beta1"] and ["v1beta1","v1"]

--apiserver needs the kube-apiserver and etcd binaries: --assets DIR, else
$KUBEBUILDER_ASSETS, else hack/envtest-assets.sh of an Orkestra checkout
(searched from the working directory and the katalog's directory).

Objects a path that declares mayFail rejects are left out of the round-trip,
protocol and apiserver groups; static/may fail says how many, per path and
version, and why.

--golden FILE holds pairs of documents: an object, then the object expected
when it is read at the second document's apiVersion.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			start := time.Now()
			kf.strictTotality = true // the static group holds conversions to totality
			plan, diags, err := kf.build()
			if err != nil {
				return err
			}
			if plan == nil {
				// The katalog does not load: nothing but static/compile.
				file := ""
				if len(kf.files) > 0 {
					file = kf.files[0]
				}
				report := conformance.CompileFailure(file, diags, time.Since(start))
				report.Seed, report.Count = seed, max(count, 0)
				if err := report.WriteText(out); err != nil {
					return err
				}
				if err := writeJUnit(junit, report); err != nil {
					return err
				}
				return exitCode(1)
			}
			// Errors go into the report (static/compile), and every other
			// check runs on what compiles; warnings go to stderr.
			kf.report(cmd.ErrOrStderr(), diags.Warnings())
			opts := conformance.Options{
				Diagnostics:    diags,
				Count:          count,
				Seed:           seed,
				APIServer:      apiserver,
				APIServerCount: apiCount,
				AssetsDir:      assets,
				Progress:       func(c conformance.Check) { _, _ = io.WriteString(out, conformance.FormatCheck(c)) },
			}
			if count == 0 {
				opts.Count = -1 // --count 0: samples only
			}
			if apiCount == 0 {
				opts.APIServerCount = -1
			}
			if len(args) > 0 {
				objs, err := readObjects(args, cmd.InOrStdin())
				if err != nil {
					return err
				}
				opts.Samples = objs
			}
			for _, f := range golden {
				g, err := readGolden(f)
				if err != nil {
					return err
				}
				opts.Golden = append(opts.Golden, g...)
			}
			if apiserver {
				// envtest logs through controller-runtime's logger; the
				// suite reports what matters.
				ctrllog.SetLogger(logr.Discard())
			}
			// A signal — SIGPIPE too, when the output is piped into a
			// command that exits early — stops the run cleanly, so that
			// kube-apiserver and etcd are stopped as well.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
			defer stop()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			report := conformance.Run(ctx, plan, opts)
			report.Duration = time.Since(start)
			if _, err := fmt.Fprintln(out, report.Summary()); err != nil {
				return err
			}
			if err := writeJUnit(junit, report); err != nil {
				return err
			}
			if report.Failed() {
				return exitCode(1)
			}
			return nil
		},
	}
	kf.register(cmd)
	kf.registerKubeconfig(cmd)
	f := cmd.Flags()
	f.BoolVar(&apiserver, "apiserver", false, "also run the checks against kube-apiserver and etcd (envtest) calling /convert over TLS")
	f.StringVar(&junit, "junit", "", "write a JUnit XML report to FILE")
	f.IntVar(&count, "count", conformance.DefaultCount, "objects generated per served version for the static and round-trip checks (0: sample objects only)")
	f.Int64Var(&seed, "seed", 1, "seed of the generated objects")
	f.IntVar(&apiCount, "apiserver-count", conformance.DefaultAPIServerCount, "generated objects per served version written to the API server, besides the samples")
	f.StringVar(&assets, "assets", "", "directory holding kube-apiserver and etcd (default $KUBEBUILDER_ASSETS, else hack/envtest-assets.sh of an Orkestra checkout)")
	f.StringArrayVar(&golden, "golden", nil, "file of expected conversions: pairs of documents, an object then the object expected at the second's apiVersion (repeatable)")
	f.DurationVar(&timeout, "timeout", 0, "give up after this long (0: no limit; every API server operation has its own time limit)")
	return cmd
}

func writeJUnit(path string, report *conformance.Report) error {
	if path == "" {
		return nil
	}
	var b bytes.Buffer
	if err := report.WriteJUnit(&b); err != nil {
		return fmt.Errorf("writing the JUnit report: %w", err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing the JUnit report: %w", err)
	}
	return nil
}

// readGolden reads expected conversions: documents in pairs, the input then
// the expected object (whose apiVersion names the version to read at).
func readGolden(path string) ([]conformance.Golden, error) {
	objs, err := readObjects([]string{path}, nil)
	if err != nil {
		return nil, err
	}
	if len(objs)%2 != 0 {
		return nil, fmt.Errorf("%s: %d documents; a golden file holds pairs (an object, then the object expected at the second's apiVersion)", path, len(objs))
	}
	var out []conformance.Golden
	for i := 0; i < len(objs); i += 2 {
		in, want := objs[i], objs[i+1]
		out = append(out, conformance.Golden{
			Name:    fmt.Sprintf("%s#%d %s→%s", path, i/2+1, in.GetAPIVersion(), want.GetAPIVersion()),
			Object:  in,
			Version: want.GetAPIVersion(),
			Want:    want.Object,
		})
	}
	return out, nil
}
