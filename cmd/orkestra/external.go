package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/operator/external"
)

// externalFlags are the flags of the commands that run the katalog's
// external calls (run, dev, simulate).
type externalFlags struct {
	allow []string
	// deny refuses katalogs that declare calls (run --deny-external).
	deny bool
	// skip makes no call (simulate --skip-external).
	skip bool
}

func (f *externalFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&f.allow, "external-allow", nil, "loopback or private ranges (CIDR, or one address) external: calls and cross reads with source: may reach, e.g. 10.96.0.0/12 for in-cluster Services; repeatable. Link-local and cloud-metadata addresses are refused whatever this says")
}

// client returns the external client the flags describe.
func (f *externalFlags) client() (*external.Client, error) {
	allow, err := external.ParseAllow(f.allow)
	if err != nil {
		return nil, err
	}
	return external.New(external.Options{Allow: allow, Skip: f.skip}), nil
}

// refuse returns an error listing the katalog's external calls and remote
// cross reads when calls are denied (run --deny-external).
func (f *externalFlags) refuse(plan *engine.Plan) error {
	if !f.deny {
		return nil
	}
	var calls []string
	for _, e := range plan.Entries {
		for _, c := range e.External {
			calls = append(calls, fmt.Sprintf("%s: [%s] %s (%s)", c.Source.Pos, e.Name, c.Source.Field, c.Source.Name))
		}
		for _, r := range e.Remote {
			calls = append(calls, fmt.Sprintf("%s: [%s] %s.source (cross read %s)", r.Source.Remote.Pos, e.Name, r.Source.Field, r.Source.As))
		}
	}
	if len(calls) == 0 {
		return nil
	}
	return fmt.Errorf("--deny-external: the katalog declares external calls (or cross reads with source:), which reach outside the cluster:\n  %s\nremove them, or run without --deny-external", strings.Join(calls, "\n  "))
}
