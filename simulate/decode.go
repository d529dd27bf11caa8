package simulate

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/specyaml"
)

// apiVersions a spec may declare (upstream's current and older group).
var apiVersions = []string{"orkestra.orkspace.io/v1", "orkestra.konductor.io/v1Alpha"}

// Read reads the Simulate spec in file: its shape, every key, the files it
// names (which must exist), includes expanded. Imported specs are not read
// (Load reads a suite whole). A spec that cannot run is an *InvalidError.
func Read(file string) (*Spec, error) {
	r := &reader{}
	spec := r.spec(file)
	if r.failed() {
		return nil, &InvalidError{Problems: r.problems}
	}
	return spec, nil
}

var topKeys = []string{"apiVersion", "kind", "metadata", "imports", "spec"}

func (r *reader) spec(file string) *Spec {
	y, root := specyaml.Open(file, &r.problems)
	if root == nil {
		return nil
	}
	top := y.Mapping(root, "", topKeys, nil)
	if top == nil {
		return nil
	}
	if !top.Has("kind") {
		y.Errorf(specyaml.Resolve(root), "kind", "missing: a Simulate spec says kind: Simulate")
	} else if k := y.Str(top.V("kind"), "kind"); k != "Simulate" {
		y.Errorf(top.V("kind"), "kind", "is %q, not Simulate: orkestra simulate runs Simulate specs (a spec names its katalog under spec.katalog)", k)
	}
	if top.Has("apiVersion") {
		if v := y.Str(top.V("apiVersion"), "apiVersion"); !slices.Contains(apiVersions, v) {
			y.Errorf(top.V("apiVersion"), "apiVersion", "is %q; use %s", v, apiVersions[0])
		}
	}
	s := &Spec{File: file}
	meta := y.Mapping(top.V("metadata"), "metadata", []string{"name", "description"}, nil)
	s.Name, s.Description = y.Str(meta.V("name"), "metadata.name"), y.Str(meta.V("description"), "metadata.description")
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	for i, n := range y.Items(top.V("imports"), "imports") {
		s.Imports = append(s.Imports, Import{Path: y.Existing(n, fmt.Sprintf("imports[%d]", i), y.Dir), Pos: y.Pos(n)})
	}
	if top.Has("spec") {
		s.Run = r.run(y, top.V("spec"))
	}
	if s.Run == nil && len(s.Imports) == 0 && !r.failed() {
		y.Errorf(specyaml.Resolve(root), "", "neither spec: nor imports: — a spec runs a katalog (spec:) or a suite of specs (imports:)")
	}
	return s
}

var runKeys = []string{"katalog", "catalog", "cr", "crFiles", "crd", "crdFiles", "cycles", "skipExternal", "expect", "target"}

func (r *reader) run(y *specyaml.Reader, n *yaml.Node) *Run {
	m := y.Mapping(n, "spec", runKeys, nil)
	if m == nil {
		return nil
	}
	run := &Run{Cycles: DefaultCycles, Pos: y.Pos(specyaml.Resolve(n))}
	if m.Has("target") {
		y.Errorf(m["target"].Key, "spec.target", "upstream's serve targets (a remote reconciler) are not supported: this runtime reconciles the katalog itself; remove target:")
	}
	kat, hasKat := m["katalog"]
	if old, ok := m["catalog"]; ok {
		if hasKat {
			y.Errorf(old.Key, "spec.catalog", "the older spelling of katalog; give one of them")
		}
		kat, hasKat = old, true
	}
	if !hasKat {
		y.Errorf(specyaml.Resolve(n), "spec.katalog", "missing: name the katalog (or Komposer) to simulate, relative to this file")
	} else {
		run.Katalog = y.Existing(kat.Value, "spec.katalog", y.Dir)
	}
	run.CRs = specFiles(y, m, "cr", "crFiles")
	if len(run.CRs) == 0 && !r.failed() {
		y.Errorf(specyaml.Resolve(n), "spec.cr", "missing: give the custom resources to reconcile (cr: or crFiles:)")
	}
	run.CRDs = specFiles(y, m, "crd", "crdFiles")
	if c, ok := y.Int(m.V("cycles"), "spec.cycles"); ok {
		if c < 1 {
			y.Errorf(m.V("cycles"), "spec.cycles", "must be at least 1")
		}
		run.Cycles = c
	}
	run.SkipExternal = y.Bool(m.V("skipExternal"), "spec.skipExternal")
	if m.Has("expect") {
		run.Expect = r.expect(y, "spec.expect", m.V("expect"), run.Cycles, true)
	}
	return run
}

// failed reports whether an error was found already.
func (r *reader) failed() bool { return r.problems.HasErrors() }

// specFiles reads a single-file key and a list key (cr and crFiles).
func specFiles(y *specyaml.Reader, m specyaml.Fields, one, many string) []string {
	var out []string
	if p := y.Existing(m.V(one), "spec."+one, y.Dir); p != "" {
		out = append(out, p)
	}
	for i, n := range y.Items(m.V(many), "spec."+many) {
		if p := y.Existing(n, fmt.Sprintf("spec.%s[%d]", many, i), y.Dir); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// expect reads an expect: block; top is false inside crds:.
func (r *reader) expect(y *specyaml.Reader, field string, n *yaml.Node, cycles int, top bool) *Expect {
	keys := []string{"steady", "steadyAt", "noErrors", "ops", "absent"}
	if top {
		keys = append(keys, "crds")
	}
	m := y.Mapping(n, field, keys, nil)
	if m == nil {
		return nil
	}
	e := &Expect{Pos: y.Pos(specyaml.Resolve(n))}
	if m.Has("steady") {
		v := y.Bool(m.V("steady"), field+".steady")
		e.Steady = &v
	}
	if v, ok := y.Int(m.V("steadyAt"), field+".steadyAt"); ok {
		if v < 2 || v > cycles {
			y.Errorf(m.V("steadyAt"), field+".steadyAt", "is %d: steady state is first seen at cycle 2 or later (two identical cycles), and the spec runs %d cycles", v, cycles)
		}
		e.SteadyAt = &v
	}
	e.NoErrors = y.Bool(m.V("noErrors"), field+".noErrors")
	inc := &includes{r: r, cycles: cycles}
	if m.Has("ops") {
		e.Ops = inc.rules(y, field+".ops", m.V("ops"), false, nil)
	}
	if m.Has("absent") {
		e.Absent = inc.rules(y, field+".absent", m.V("absent"), true, nil)
	}
	if m.Has("crds") {
		mn := specyaml.Resolve(m.V("crds"))
		if mn == nil || mn.Kind != yaml.MappingNode {
			y.Errorf(mn, field+".crds", "must be a map of katalog entry names to expect blocks")
			return e
		}
		e.CRDs, e.CRDPos = map[string]*Expect{}, map[string]katalog.Pos{}
		for _, q := range y.Pairs(mn, field+".crds") {
			if name := q.Key.Value; !strings.HasPrefix(name, "x-") {
				e.CRDs[name] = r.expect(y, field+".crds."+name, q.Value, cycles, false)
				e.CRDPos[name] = y.Pos(q.Key)
			}
		}
	}
	return e
}
