// Package specyaml reads the YAML files of test specs (orkestra simulate's
// and orkestra e2e's) as positioned nodes, so that every problem is a
// katalog.Diagnostic naming file:line:col and the field, all problems of a
// file are reported at once, and anchors, aliases and merge keys (`<<:
// *base`) resolve as YAML defines them. Keys starting with x- are ignored
// everywhere: they hold anchors.
package specyaml

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/orkspace/orkestra-cel/katalog"
)

// MaxFileBytes bounds a spec or included file.
const MaxFileBytes = 1 << 20

// Reader reads the nodes of one file and records its problems in Diags.
type Reader struct {
	File  string
	Dir   string // the directory of File, absolute
	Diags *katalog.Diagnostics
}

// Open reads file as one YAML document. The root is nil when it cannot
// be read (reported in diags); the Reader is usable either way.
func Open(file string, diags *katalog.Diagnostics) (*Reader, *yaml.Node) {
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	r := &Reader{File: file, Dir: filepath.Dir(abs), Diags: diags}
	data, err := readBounded(file)
	if err != nil {
		r.Errorf(nil, "", "reading the file: %v", err)
		return r, nil
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		r.Errorf(nil, "", "not valid YAML: %v", err)
		return r, nil
	}
	var extra yaml.Node
	if dec.Decode(&extra) == nil {
		r.Errorf(&extra, "", "a second YAML document: a spec file holds one (write a suite with imports: to run several)")
	}
	return r, &doc
}

func readBounded(file string) ([]byte, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", file)
	}
	if st.Size() > MaxFileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", file, MaxFileBytes)
	}
	return os.ReadFile(file)
}

// Pos is n's position in the file (the file's start when n is nil).
func (r *Reader) Pos(n *yaml.Node) katalog.Pos {
	if n == nil {
		return katalog.Pos{File: r.File}
	}
	return katalog.Pos{File: r.File, Line: n.Line, Col: n.Column}
}

// Errorf records an error at n.
func (r *Reader) Errorf(n *yaml.Node, field, format string, args ...any) {
	*r.Diags = append(*r.Diags, katalog.Diagnostic{Pos: r.Pos(n), Field: field, Message: fmt.Sprintf(format, args...)})
}

// Warnf records a warning at n.
func (r *Reader) Warnf(n *yaml.Node, field, format string, args ...any) {
	*r.Diags = append(*r.Diags, katalog.Diagnostic{Pos: r.Pos(n), Severity: katalog.Warning, Field: field, Message: fmt.Sprintf(format, args...)})
}

// Existing resolves the path written at n against dir and reports it when
// nothing is there; "" when n is absent or null.
func (r *Reader) Existing(n *yaml.Node, field, dir string) string {
	written := r.Str(n, field)
	if written == "" {
		return ""
	}
	p := written
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if _, err := os.Stat(p); err != nil {
		r.Errorf(n, field, "%s: no such file (a relative path is relative to the directory of the file that names it)", written)
	}
	return p
}
