package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orkspace/orkestra-cel/engine/conversion"
)

func newConvertCmd() *cobra.Command {
	var kf katalogFlags
	var to, output string
	cmd := &cobra.Command{
		Use:   "convert -f KATALOG --to VERSION [-o yaml|json] [OBJECT.yaml…]",
		Short: "Convert objects to another version offline and print them as YAML",
		Long: `convert applies the katalog's conversion paths to objects read from the
files given (stdin when none; several YAML documents or a List per file) and
prints the converted objects as YAML — exactly what the /convert webhook
returns. --to takes a version (v1) or group/version (demo.example.io/v1).
It exits non-zero with the message when any object fails to convert.
-o json prints one JSON document (a List when there are several objects).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "yaml", "json"); err != nil {
				return err
			}
			if to == "" {
				return errors.New("--to VERSION is required")
			}
			plan, err := kf.compile(cmd.ErrOrStderr())
			if errors.Is(err, errProblems) {
				return exitCode(1)
			}
			if err != nil {
				return err
			}
			objs, err := readObjects(args, cmd.InOrStdin())
			if err != nil {
				return err
			}
			conv := conversion.New(plan, conversion.Options{})
			out := make([]map[string]any, 0, len(objs))
			for _, o := range objs {
				desired := to
				if !strings.Contains(to, "/") {
					desired = o.GroupVersionKind().Group + "/" + to
				}
				res, err := conv.Convert(o, desired)
				if err != nil {
					return err
				}
				out = append(out, res.Object)
			}
			if err := writeObjectsAs(cmd.OutOrStdout(), output, out); err != nil {
				return fmt.Errorf("writing output: %w", err)
			}
			return nil
		},
	}
	kf.register(cmd)
	kf.registerKubeconfig(cmd)
	cmd.Flags().StringVar(&to, "to", "", "target version (v1) or group/version")
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: yaml or json")
	return cmd
}
