package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Discover returns the E2E specs under root, in lexical order: files whose
// name contains "e2e" and ends in .yaml or .yml (e2e.yaml, e2e-custom.yaml)
// and whose top level says kind: E2E, outside directories named testdata
// or vendor and those starting with . or _ (as go test ./... skips them).
// Included expectation files hold no kind and are not picked up.
func Discover(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.Contains(name, "e2e") || !(strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")) {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && declaresE2E(b) {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// declaresE2E reports a document whose top level says kind: E2E.
func declaresE2E(b []byte) bool {
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimRight(l, " \t\r") == "kind: E2E" {
			return true
		}
	}
	return false
}
