package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/lifecycle/compat"
)

func newCheckCmd() *cobra.Command {
	var kf katalogFlags
	var against, format string
	cmd := &cobra.Command{
		Use:   "check -f KATALOG [--strict] [--against OLD_KATALOG] [--format text|json|sarif|github]",
		Short: "Load and compile a katalog; list every problem as file:line:col: message",
		Long: `check loads the katalog and its CRD manifests, compiles every expression
against the schema of the CRD version it runs on, estimates its cost, and
checks every conversion path on both sides. It exits 0 with a one-line
summary when the katalog is clean, and 1 with one line per problem otherwise.

A conversion expression that can fail on an object its source schema
accepts (a field that is not required read without a guard, an index or a
split beyond what the schema guarantees, …) is a warning; with --strict it
is an error. A conversion path that declares it may fail, with the reason
(mayFail: "…"), has its findings listed as acknowledged: they fail nothing,
and the summary counts them. A mayFail on a path without findings is a
warning (with --strict an error): remove it.

With --against, the katalog is also compared with an older revision of it (a
file or directory, e.g. a checkout of the last release): every change that
breaks clients or stored objects is a finding at the line of the new
revision — a served version removed while it may still be stored, a version
no longer served (an error unless it was deprecated first), the storage
version changed (a migration will run), a field removed from a version
without a conversion that carries it, a field newly required without a
default, a conversion or conversion path dropped. Errors exit 1; warnings
are printed and exit 0.

--format picks the output: text (the default, one line per problem), json
(for scripts), sarif (SARIF 2.1.0, for code scanning) or github (workflow
annotations on the lines of a pull request). Each finding carries its file,
line, column, severity and a rule id (orkestra/<area>: schema, reconcile,
conversion, admission, …).`,
		Example: `  orkestra check -f katalog/
  git worktree add /tmp/last v1.4.0 && orkestra check -f katalog/ --against /tmp/last/katalog/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !slices.Contains(checkFormats, format) {
				return fmt.Errorf("--format %q: use one of %s", format, strings.Join(checkFormats, ", "))
			}
			kf.showAcknowledged = true
			var diags katalog.Diagnostics
			if format != "text" {
				kf.collect = &diags
			}
			plan, err := kf.compile(cmd.ErrOrStderr())
			if errors.Is(err, errProblems) {
				if format != "text" {
					if err := writeFindings(cmd.OutOrStdout(), format, diags, ""); err != nil {
						return err
					}
				}
				return exitCode(1)
			}
			if err != nil {
				return err
			}
			s := plan.Stats
			line := fmt.Sprintf("ok: %s — %s, %s, %s", plan.Katalog.File,
				plural(s.Entries, "entry", "entries"), plural(s.Expressions, "expression", "expressions"), plural(s.Paths, "conversion path", "conversion paths"))
			line += acknowledgedSummary(plan)
			if against != "" {
				more, err := checkAgainst(cmd.ErrOrStderr(), kf, plan, against)
				var ec exitCode
				if errors.As(err, &ec) && format != "text" {
					if werr := writeFindings(cmd.OutOrStdout(), format, diags, ""); werr != nil {
						return werr
					}
				}
				if err != nil {
					return err
				}
				line += more
			}
			if format != "text" {
				return writeFindings(cmd.OutOrStdout(), format, diags, line)
			}
			fmt.Fprintln(cmd.OutOrStdout(), line)
			return nil
		},
	}
	kf.register(cmd)
	kf.registerKubeconfig(cmd)
	cmd.Flags().BoolVar(&kf.strictTotality, "strict", false, "a conversion expression that can fail on an object its source schema accepts is an error, not a warning")
	cmd.Flags().StringVar(&format, "format", "text", "output: text, json, sarif (SARIF 2.1.0) or github (workflow annotations)")
	cmd.Flags().StringVar(&against, "against", "", "an older revision of the katalog (file or directory): report the changes that break clients or stored objects")
	return cmd
}

// checkAgainst compiles the old revision, prints every finding of going from
// it to plan on w, and returns what the summary line adds; an error finding
// ends the command with exit status 1.
func checkAgainst(w io.Writer, kf katalogFlags, plan *engine.Plan, against string) (string, error) {
	old := kf
	old.files, old.collect = []string{against}, nil
	oldPlan, err := old.compile(io.Discard)
	if errors.Is(err, errProblems) {
		return "", fmt.Errorf("--against %s: the old revision does not compile; run orkestra check -f %s to see why", against, against)
	}
	if err != nil {
		return "", err
	}
	findings := compat.Compare(oldPlan, plan)
	kf.report(w, findings)
	errs, warns := len(findings.Errors()), len(findings.Warnings())
	if errs > 0 {
		fmt.Fprintf(w, "against %s: %s, %s\n", against, plural(errs, "breaking change", "breaking changes"), plural(warns, "warning", "warnings"))
		return "", exitCode(1)
	}
	return fmt.Sprintf("; against %s: no breaking change, %s", against, plural(warns, "warning", "warnings")), nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// acknowledgedSummary is what the summary line says of the paths that
// declare mayFail: how many, with how many acknowledged findings.
func acknowledgedSummary(plan *engine.Plan) string {
	paths, findings := 0, 0
	for _, c := range plan.Conversions {
		for _, p := range c.Paths {
			if p.MayFail() != "" {
				paths++
				findings += len(p.Findings)
			}
		}
	}
	if paths == 0 {
		return ""
	}
	return fmt.Sprintf("; %s may fail (mayFail), %s", plural(paths, "conversion path", "conversion paths"), plural(findings, "acknowledged finding", "acknowledged findings"))
}
