package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	celengine "github.com/orkspace/orkestra-cel/engine/cel"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and the pinned CEL compatibility version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			celgo := "unknown"
			if info, ok := debug.ReadBuildInfo(); ok {
				for _, m := range info.Deps {
					if m.Path == "github.com/google/cel-go" {
						celgo = m.Version
					}
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "orkestra %s\nCEL compatibility version: Kubernetes %s (cel-go %s)\n", version, celengine.CompatibilityVersion, celgo)
		},
	}
}
