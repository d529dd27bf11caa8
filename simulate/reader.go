package simulate

import (
	"fmt"

	"github.com/orkspace/orkestra-cel/katalog"
)

// reader collects the problems of one spec: its files' (read with
// specyaml, shared with orkestra e2e) and those found preparing its run.
type reader struct {
	problems katalog.Diagnostics
}

func (r *reader) errorf(p katalog.Pos, field, format string, args ...any) {
	r.problems = append(r.problems, katalog.Diagnostic{Pos: p, Field: field, Message: fmt.Sprintf(format, args...)})
}
