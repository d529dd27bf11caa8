package simulate

import (
	"path/filepath"
	"strings"

	"github.com/orkspace/orkestra-cel/katalog"
)

// Loaded is one spec to run, or why a spec file cannot run.
type Loaded struct {
	File string
	Spec *Spec
	Err  error
}

// Load reads the specs in files and, for a suite, the specs it imports
// (recursively; a spec with both spec: and imports: runs its imports
// first). Each spec file appears once, where it is first met. An import
// cycle is an error of the file that closes it.
func Load(files ...string) []Loaded {
	l := &loader{seen: map[string]bool{}}
	for _, f := range files {
		l.load(abs(f), nil)
	}
	return l.out
}

type loader struct {
	seen map[string]bool
	out  []Loaded
}

func (l *loader) load(file string, stack []string) {
	for _, s := range stack {
		if s == file {
			l.out = append(l.out, Loaded{File: stack[len(stack)-1], Err: &InvalidError{Problems: katalog.Diagnostics{{
				Pos: katalog.Pos{File: stack[len(stack)-1]}, Field: "imports",
				Message: "import cycle: " + strings.Join(append(stack, file), " → "),
			}}}})
			return
		}
	}
	if l.seen[file] {
		return
	}
	l.seen[file] = true
	spec, err := Read(file)
	if err != nil {
		l.out = append(l.out, Loaded{File: file, Err: err})
		return
	}
	for _, imp := range spec.Imports {
		l.load(imp.Path, append(stack, file))
	}
	if spec.Run != nil {
		l.out = append(l.out, Loaded{File: file, Spec: spec})
	}
}

func abs(f string) string {
	if a, err := filepath.Abs(f); err == nil {
		return a
	}
	return f
}
