package simulate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/orkspace/orkestra-cel/katalog"
)

// apiVersions a spec may declare (upstream's current and older group).
var apiVersions = []string{"orkestra.orkspace.io/v1", "orkestra.konductor.io/v1Alpha"}

// Read reads the Simulate spec in file: its shape, every key, the files it
// names (which must exist), includes expanded. Imported specs are not read
// (Load reads a suite whole). A spec that cannot run is an *InvalidError.
func Read(file string) (*Spec, error) {
	r := &reader{}
	spec := r.spec(file)
	if len(r.problems) > 0 {
		return nil, &InvalidError{Problems: r.problems}
	}
	return spec, nil
}

func (r *reader) spec(file string) *Spec {
	root := r.parse(file, katalog.Pos{File: file}, "")
	if root == nil {
		return nil
	}
	top := r.mapping(file, "", root, "apiVersion", "kind", "metadata", "imports", "spec")
	if top == nil {
		return nil
	}
	if p, ok := top["kind"]; !ok {
		r.errorf(posOf(file, root), "kind", "missing: a Simulate spec says kind: Simulate")
	} else if k, _ := r.str(file, "kind", p.value); k != "Simulate" {
		r.errorf(posOf(file, p.value), "kind", "is %q, not Simulate: orkestra simulate runs Simulate specs (a spec names its katalog under spec.katalog)", k)
	}
	if p, ok := top["apiVersion"]; ok {
		if v, _ := r.str(file, "apiVersion", p.value); !slices.Contains(apiVersions, v) {
			r.errorf(posOf(file, p.value), "apiVersion", "is %q; use %s", v, apiVersions[0])
		}
	}
	s := &Spec{File: file}
	if p, ok := top["metadata"]; ok {
		meta := r.mapping(file, "metadata", p.value, "name", "description")
		if m, ok := meta["name"]; ok {
			s.Name, _ = r.str(file, "metadata.name", m.value)
		}
		if m, ok := meta["description"]; ok {
			s.Description, _ = r.str(file, "metadata.description", m.value)
		}
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	dir := filepath.Dir(file)
	if p, ok := top["imports"]; ok {
		for i, n := range r.list(file, "imports", p.value) {
			field := fmt.Sprintf("imports[%d]", i)
			if path, ok := r.str(file, field, n); ok {
				s.Imports = append(s.Imports, Import{Path: r.existing(dir, path, posOf(file, n), field), Pos: posOf(file, n)})
			}
		}
	}
	if p, ok := top["spec"]; ok {
		s.Run = r.run(file, dir, p.value)
	}
	if s.Run == nil && len(s.Imports) == 0 && len(r.problems) == 0 {
		r.errorf(posOf(file, root), "", "neither spec: nor imports: — a spec runs a katalog (spec:) or a suite of specs (imports:)")
	}
	return s
}

// existing resolves path against dir and reports it when it does not exist.
func (r *reader) existing(dir, path string, at katalog.Pos, field string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	if err := isFile(path); err != nil {
		r.errorf(at, field, "%v", err)
	}
	return path
}

func (r *reader) run(file, dir string, n *yaml.Node) *Run {
	m := r.mapping(file, "spec", n, "katalog", "catalog", "cr", "crFiles", "crd", "crdFiles", "cycles", "skipExternal", "expect", "target")
	if m == nil {
		return nil
	}
	run := &Run{Cycles: DefaultCycles, Pos: posOf(file, resolve(n))}
	if p, ok := m["target"]; ok {
		r.errorf(posOf(file, p.keyAt), "spec.target", "upstream's serve targets (a remote reconciler) are not supported: this runtime reconciles the katalog itself; remove target:")
	}
	kat, hasKat := m["katalog"]
	if old, ok := m["catalog"]; ok {
		if hasKat {
			r.errorf(posOf(file, old.keyAt), "spec.catalog", "the older spelling of katalog; give one of them")
		}
		kat, hasKat = old, true
	}
	if !hasKat {
		r.errorf(run.Pos, "spec.katalog", "missing: name the katalog (or Komposer) to simulate, relative to this file")
	} else if path, ok := r.str(file, "spec.katalog", kat.value); ok {
		run.Katalog = r.existingPath(dir, path, posOf(file, kat.value), "spec.katalog")
	}
	run.CRs = r.files(file, dir, m, "cr", "crFiles")
	if len(run.CRs) == 0 && !r.failed() {
		r.errorf(run.Pos, "spec.cr", "missing: give the custom resources to reconcile (cr: or crFiles:)")
	}
	run.CRDs = r.files(file, dir, m, "crd", "crdFiles")
	if p, ok := m["cycles"]; ok {
		if c, ok := r.integer(file, "spec.cycles", p.value); ok {
			if c < 1 {
				r.errorf(posOf(file, p.value), "spec.cycles", "must be at least 1")
			}
			run.Cycles = c
		}
	}
	if p, ok := m["skipExternal"]; ok {
		run.SkipExternal, _ = r.boolean(file, "spec.skipExternal", p.value)
	}
	if p, ok := m["expect"]; ok {
		run.Expect = r.expect(file, dir, "spec.expect", p.value, run.Cycles, true)
	}
	return run
}

// failed reports whether a problem was found already.
func (r *reader) failed() bool { return len(r.problems) > 0 }

// files reads a single-file key and a list key (cr and crFiles).
func (r *reader) files(file, dir string, m map[string]pair, one, many string) []string {
	var out []string
	if p, ok := m[one]; ok {
		if path, ok := r.str(file, "spec."+one, p.value); ok {
			out = append(out, r.existing(dir, path, posOf(file, p.value), "spec."+one))
		}
	}
	if p, ok := m[many]; ok {
		for i, n := range r.list(file, "spec."+many, p.value) {
			field := fmt.Sprintf("spec.%s[%d]", many, i)
			if path, ok := r.str(file, field, n); ok {
				out = append(out, r.existing(dir, path, posOf(file, n), field))
			}
		}
	}
	return out
}

// existingPath is existing for a file or a directory (a katalog may be a
// directory of documents).
func (r *reader) existingPath(dir, path string, at katalog.Pos, field string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	if _, err := os.Stat(path); err != nil {
		if os.IsNotExist(err) {
			err = fmt.Errorf("%s does not exist (paths are relative to the spec file)", path)
		}
		r.errorf(at, field, "%v", err)
	}
	return path
}

// expect reads an expect: block; top is false inside crds:.
func (r *reader) expect(file, dir, field string, n *yaml.Node, cycles int, top bool) *Expect {
	keys := []string{"steady", "steadyAt", "noErrors", "ops", "absent"}
	if top {
		keys = append(keys, "crds")
	}
	m := r.mapping(file, field, n, keys...)
	if m == nil {
		return nil
	}
	e := &Expect{Pos: posOf(file, resolve(n))}
	if p, ok := m["steady"]; ok {
		if v, ok := r.boolean(file, field+".steady", p.value); ok {
			e.Steady = &v
		}
	}
	if p, ok := m["steadyAt"]; ok {
		if v, ok := r.integer(file, field+".steadyAt", p.value); ok {
			if v < 2 || v > cycles {
				r.errorf(posOf(file, p.value), field+".steadyAt", "is %d: steady state is first seen at cycle 2 or later (two identical cycles), and the spec runs %d cycles", v, cycles)
			}
			e.SteadyAt = &v
		}
	}
	if p, ok := m["noErrors"]; ok {
		e.NoErrors, _ = r.boolean(file, field+".noErrors", p.value)
	}
	inc := &includes{r: r, cycles: cycles}
	if p, ok := m["ops"]; ok {
		e.Ops = inc.rules(file, dir, field+".ops", p.value, false, nil)
	}
	if p, ok := m["absent"]; ok {
		e.Absent = inc.rules(file, dir, field+".absent", p.value, true, nil)
	}
	if p, ok := m["crds"]; ok {
		mn := resolve(p.value)
		if mn == nil || mn.Kind != yaml.MappingNode {
			r.errorf(posOf(file, mn), field+".crds", "must be a mapping of katalog entry names to expect blocks")
		} else {
			e.CRDs, e.CRDPos = map[string]*Expect{}, map[string]katalog.Pos{}
			for _, q := range r.pairs(file, field+".crds", mn) {
				e.CRDs[q.key] = r.expect(file, dir, field+".crds."+q.key, q.value, cycles, false)
				e.CRDPos[q.key] = posOf(file, q.keyAt)
			}
		}
	}
	return e
}
