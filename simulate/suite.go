package simulate

import (
	"errors"
	"io/fs"
	"os"
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

// IsSpecName reports whether a file name is one discovery picks up:
// simulate.yaml, simulate-….yaml (and .yml).
func IsSpecName(name string) bool {
	ext := filepath.Ext(name)
	if ext != ".yaml" && ext != ".yml" {
		return false
	}
	base := strings.TrimSuffix(name, ext)
	return base == "simulate" || strings.HasPrefix(base, "simulate-")
}

// Discover returns the spec files under root, in lexical order: files
// named simulate.yaml or simulate-*.yaml, outside directories named
// testdata or vendor and those starting with . or _ (as go test ./...
// skips them), and outside paths containing any of skip.
func Discover(root string, skip []string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		for _, s := range skip {
			if s != "" && strings.Contains(path, s) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if IsSpecName(name) && d.Type().IsRegular() {
			out = append(out, path)
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil, errors.New(root + " does not exist")
	}
	return out, err
}
