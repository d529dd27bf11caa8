package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/conversion"
)

func newExplainCmd() *cobra.Command {
	var kf katalogFlags
	var from, to, output string
	cmd := &cobra.Command{
		Use:   "explain -f KATALOG [--crd NAME] [--from V --to W] [-o text|json]",
		Short: "Show, per field, where each conversion path puts it and how it comes back",
		Long: `explain prints the coverage of every conversion path: for each leaf field of
the source version, the target fields whose expression reads it (or that it
has no counterpart and travels in the round-trip annotation), and how it
comes back:

  exact                                          the way back copies it back
  exact through the stash                        the way back writes a literal or
                                                 nothing: the original is restored
  exact through the stash; lossy after an edit   the way back computes it: the
                                                 original is restored while what that
                                                 expression reads is unchanged, and an
                                                 edit at the other version wins

and the target fields the path sets to a literal. A path that can fail on
an object its source schema accepts says so in its first line — "may fail"
with the reason when it declares mayFail, else that it does not — and lists
each place it can fail, marked acknowledged or not. --crd takes, besides a CRD
manifest as for every command, the name of a CRD (widgets.example.org) or of
a katalog entry to explain; --from and --to pick paths.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "json" {
				return fmt.Errorf("-o %q: use text or json", output)
			}
			names := kf.crdNames()
			plan, err := kf.compile(cmd.ErrOrStderr())
			if errors.Is(err, errProblems) {
				return exitCode(1)
			}
			if err != nil {
				return err
			}
			covs, err := coverages(plan, names, from, to)
			if err != nil {
				return err
			}
			if output == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(covs)
			}
			return writeCoverages(cmd.OutOrStdout(), covs)
		},
	}
	kf.register(cmd)
	kf.registerKubeconfig(cmd)
	cmd.Flags().StringVar(&from, "from", "", "only paths from this version")
	cmd.Flags().StringVar(&to, "to", "", "only paths to this version")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	return cmd
}

// coverages explains the plan's paths that match the filters: CRDs or
// entries by name (none: all), versions.
func coverages(plan *engine.Plan, crds []string, from, to string) ([]*conversion.Coverage, error) {
	conv := conversion.New(plan, conversion.Options{})
	var names []string
	var out []*conversion.Coverage
	for _, c := range plan.Conversions {
		names = append(names, c.CRD.Object.Name)
		if !selected(plan, c, crds) {
			continue
		}
		for pair := range c.Paths {
			if (from == "" || pair[0] == from) && (to == "" || pair[1] == to) {
				out = append(out, conv.Coverage(c, pair[0], pair[1]))
			}
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, errors.New("the katalog declares no conversion")
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no conversion path matches --crd %q --from %q --to %q (CRDs with conversion: %s)", strings.Join(crds, ","), from, to, strings.Join(names, ", "))
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.CRD != b.CRD {
			return a.CRD < b.CRD
		}
		if a.From != b.From {
			return a.From < b.From
		}
		return a.To < b.To
	})
	return out, nil
}

// selected reports whether conversion c is one the names pick: its CRD's
// name or one of its entries' names.
func selected(plan *engine.Plan, c *engine.Conversion, names []string) bool {
	if len(names) == 0 {
		return true
	}
	for _, n := range names {
		if n == c.CRD.Object.Name {
			return true
		}
		if e := plan.Entry(n); e != nil && e.Source.CRD == c.CRD {
			return true
		}
	}
	return false
}

func writeCoverages(w io.Writer, covs []*conversion.Coverage) error {
	for i, cov := range covs {
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintln(w, cov.Header()); err != nil {
			return err
		}
		for _, l := range cov.Lines() {
			if _, err := fmt.Fprintln(w, l); err != nil {
				return err
			}
		}
	}
	return nil
}
