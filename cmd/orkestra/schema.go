package main

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/orkspace/orkestra-cel/katalog"
)

func newSchemaCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of a katalog document (for editors)",
		Long: `schema prints the JSON Schema (draft 2020-12) of a katalog document,
generated from the loader's own key tables: every map accepts exactly the keys
orkestra check accepts. Point an editor at it (the README shows how); the
same schema is committed as schema/katalog.schema.json.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(katalog.JSONSchema())
		},
	}
}
