package e2e

import "github.com/orkspace/orkestra-cel/specyaml"

// reader reads one spec file's nodes (specyaml, shared with orkestra
// simulate); the E2E format's decoding is its methods.
type reader struct{ *specyaml.Reader }

type fields = specyaml.Fields
