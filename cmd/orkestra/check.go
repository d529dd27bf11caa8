package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

func newCheckCmd() *cobra.Command {
	var kf katalogFlags
	cmd := &cobra.Command{
		Use:   "check -f KATALOG [--strict]",
		Short: "Load and compile a katalog; list every problem as file:line:col: message",
		Long: `check loads the katalog and its CRD manifests, compiles every expression
against the schema of the CRD version it runs on, estimates its cost, and
checks every conversion path on both sides. It exits 0 with a one-line
summary when the katalog is clean, and 1 with one line per problem otherwise.

A conversion expression that can fail on an object its source schema
accepts (a field that is not required read without a guard, an index or a
split beyond what the schema guarantees, …) is a warning; with --strict it
is an error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			plan, err := kf.compile(cmd.ErrOrStderr())
			if errors.Is(err, errProblems) {
				return exitCode(1)
			}
			if err != nil {
				return err
			}
			s := plan.Stats
			fmt.Fprintf(cmd.OutOrStdout(), "ok: %s — %s, %s, %s\n", plan.Katalog.File,
				plural(s.Entries, "entry", "entries"), plural(s.Expressions, "expression", "expressions"), plural(s.Paths, "conversion path", "conversion paths"))
			return nil
		},
	}
	kf.register(cmd)
	kf.registerKubeconfig(cmd)
	cmd.Flags().BoolVar(&kf.strictTotality, "strict", false, "a conversion expression that can fail on an object its source schema accepts is an error, not a warning")
	return cmd
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
