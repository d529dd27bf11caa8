package simulate

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// isSpecName reports whether a file name is one discovery picks up:
// simulate.yaml, simulate-….yaml (and .yml).
func isSpecName(name string) bool {
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
		if isSpecName(name) && d.Type().IsRegular() {
			out = append(out, path)
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil, errors.New(root + " does not exist")
	}
	return out, err
}
