package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/orkspace/orkestra-cel/engine/gotmpl/migrate"
)

func newMigrateCmd() *cobra.Command {
	var (
		kf      = katalogFlags{samplesNeeded: "migrate proves its rewrites over every crFiles entry"}
		out     string
		inPlace bool
		force   bool
		list    bool
		samples []string
		count   int
		seed    int64
		layout  string
	)
	cmd := &cobra.Command{
		Use:   "migrate -f KATALOG [--layout newest|flat] [-o OUT | --in-place] [--sample CR.yaml…] [--force] [--count N]",
		Short: "Rewrite legacy templates and structured conditions to CEL, proving each rewrite equivalent",
		Long: `migrate rewrites the katalog's legacy {{ … }} templates to ${…} CEL values
and its structured conditions (- field: … / equals: …) to CEL strings.

Every translation is exact or not made: it reproduces the legacy semantics
(missing fields print as "", the output is trimmed and coerced into the
target, default treats 0/false/"" as empty, numbers print with %v, …) for
every object the CRD's schema admits. Before anything is written, each old
and new expression is evaluated on the katalog's sample objects (crFiles and
--sample files) and on objects generated from the schema (--count per CRD
version, plus edge-case variants), comparing typed outputs, absent fields
and failures. If any differ, migrate shows the smallest differing object,
both expressions and both outputs, and writes nothing (exit 1) unless
--force is given.

Comments, key order and the formatting of everything not rewritten are kept
byte for byte. What has no exact CEL form stays a legacy template and is
listed with its position and the reason. The migrated katalog is checked as
` + "`orkestra check`" + ` would. Without -o or --in-place it is printed on stdout;
the report goes to stderr.

With --layout newest, migrate instead moves the keys that upstream's newest
layout (v0.7.18) writes elsewhere — validation, mutation and conversion
under the entry's admission:, allowedNamespaces and the box's finalizers
under operatorBox.runtime:, the box's status under operatorBox.emit: —
and leaves every expression as it is; --layout flat moves them back. Each
key's lines move with their comments. Before anything is written, the moved
katalog is checked and compared with the original: the samples and --count
objects generated per entry must render alike, and the admission and
namespace rules be the same. A key that cannot move (an entry without
operatorBox, a key inside a flow map {…} or first in a list item) is an
error naming it, and nothing is written.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stderr := cmd.ErrOrStderr()
			if out != "" && inPlace {
				return errors.New("-o and --in-place exclude each other")
			}
			if layout != "" {
				return migrateLayout(cmd, &kf, layout, samples, count, seed, out, inPlace)
			}
			if count <= 0 {
				count = -1 // migrate.Options: 0 is the default, negative none
			}
			res, err := migrate.Run(migrate.Options{Files: kf.files, Load: kf.loadOptions(), Samples: samples, Count: count, Seed: seed, CostLimit: kf.costLimit})
			var pe *migrate.ProblemsError
			if errors.As(err, &pe) {
				fmt.Fprintln(stderr, pe.What+":")
				printDiagnostics(stderr, pe.Diags)
				return exitCode(1)
			}
			if err != nil {
				return err
			}
			if list && len(res.Translated) > 0 {
				fmt.Fprintf(stderr, "translated (%d):\n", len(res.Translated))
				res.WriteTranslations(stderr)
			}
			res.WriteReport(stderr)
			fmt.Fprintln(stderr, res.Summary())
			if len(res.Check) > 0 {
				fmt.Fprintln(stderr, "refusing to write: the migrated katalog does not check (this is a bug in migrate; please report it)")
				return exitCode(1)
			}
			if !res.Equivalent() {
				if !force {
					fmt.Fprintln(stderr, "refusing to write: the translations above are not equivalent to the legacy templates; nothing was written (--force writes anyway)")
					return exitCode(1)
				}
				fmt.Fprintln(stderr, "warning: --force: writing translations that are NOT equivalent")
			}
			return writeMigrated(cmd.OutOrStdout(), stderr, res, out, inPlace)
		},
	}
	kf.register(cmd)
	kf.registerKubeconfig(cmd)
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "write the migrated katalog to this file (a directory when the katalog has several files); - for stdout")
	f.BoolVar(&inPlace, "in-place", false, "rewrite the katalog's files in place")
	f.StringArrayVar(&samples, "sample", nil, "extra custom resources to verify against (YAML or JSON; repeatable)")
	f.BoolVar(&force, "force", false, "write even when a translation is not proven equivalent")
	f.IntVar(&count, "count", migrate.DefaultCount, "objects generated from each CRD version's schema to verify against (0 for none)")
	f.Int64Var(&seed, "seed", 1, "seed of the generated objects")
	f.BoolVar(&list, "list", false, "list every translation (old → new) in the report")
	f.StringVar(&layout, "layout", "", "move keys into upstream's newest layout (newest) or back (flat) instead of translating templates")
	return cmd
}

// writeMigrated writes the migrated files: stdout, -o, or in place.
func writeMigrated(stdout, stderr io.Writer, res *migrate.Result, out string, inPlace bool) error {
	switch {
	case inPlace:
		for _, f := range res.Files {
			if !f.Changed() {
				continue
			}
			mode := os.FileMode(0o644)
			if st, err := os.Stat(f.Path); err == nil {
				mode = st.Mode().Perm()
			}
			if err := os.WriteFile(f.Path, f.Migrated, mode); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "wrote %s\n", f.Path)
		}
		return nil
	case out != "" && out != "-":
		if len(res.Files) == 1 {
			if err := os.WriteFile(out, res.Files[0].Migrated, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "wrote %s\n", out)
			return nil
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		for _, f := range res.Files {
			p := filepath.Join(out, filepath.Base(f.Path))
			if err := os.WriteFile(p, f.Migrated, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "wrote %s\n", p)
		}
		return nil
	}
	for i, f := range res.Files {
		if len(res.Files) > 1 {
			if i > 0 {
				fmt.Fprintln(stdout, "---")
			}
			fmt.Fprintf(stdout, "# orkestra migrate: %s\n", f.Path)
		}
		if _, err := stdout.Write(f.Migrated); err != nil {
			return err
		}
	}
	return nil
}
