package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/orkspace/orkestra-cel/katalog"
)

// APIVersions are the apiVersions an E2E spec may declare (upstream's
// current and older groups).
var APIVersions = []string{"orkestra.orkspace.io/v1", "orkestra.konductor.io/v1Alpha"}

var (
	topKeys  = []string{"apiVersion", "kind", "metadata", "spec", "imports"}
	metaKeys = []string{"name", "description"}
	specKeys = []string{"katalog", "crd", "crdFiles", "cr", "crFiles", "custom", "customOperator", "cluster",
		"setup", "notes", "expect", "onFailure"}
	specIgnored = map[string]string{
		"valuesFiles": "valuesFiles configure upstream's Helm chart of the runtime, which orkestra e2e does not install (the operator runs in process): ignored",
	}
	clusterKeys    = []string{"provider", "name", "reuse"}
	setupKeys      = []string{"apply", "helm", "wait"}
	setupApplyKeys = []string{"path", "wait"}
	helmKeys       = []string{"repo", "chart", "release", "namespace", "version", "valueFiles", "values", "createNamespace", "wait"}
	waitKeys       = []string{"kind", "name", "namespace", "ready", "timeout"}
	importKeys     = []string{"path", "freshCluster", "wait"}
)

// MaxImportDepth bounds nested imports.
const MaxImportDepth = 16

// Parse reads an E2E spec, its includes and its imports. The spec is
// usable only when the diagnostics hold no error.
func Parse(file string) (*Spec, katalog.Diagnostics) {
	var diags katalog.Diagnostics
	s := parse(file, &diags, nil)
	return s, diags
}

func parse(file string, diags *katalog.Diagnostics, stack []string) *Spec {
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	r := &reader{file: file, dir: filepath.Dir(abs), diags: diags}
	data, err := os.ReadFile(file)
	if err != nil {
		r.errorf(nil, "", "reading the spec: %v", err)
		return nil
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		r.errorf(nil, "", "not YAML: %v", err)
		return nil
	}
	top := r.mapping(&root, "", topKeys, nil)
	if n := top.v("kind"); r.str(n, "kind") != "E2E" {
		r.errorf(orNode(n, &root), "kind", "kind must be E2E (this is %q); orkestra simulate reads kind: Simulate", r.str(n, "kind"))
		return nil
	}
	if n := top.v("apiVersion"); n != nil && !slices.Contains(APIVersions, r.str(n, "apiVersion")) {
		r.errorf(n, "apiVersion", "apiVersion %q is not an E2E spec's; write %s", r.str(n, "apiVersion"), APIVersions[0])
	}
	s := &Spec{File: file, Dir: r.dir}
	meta := r.mapping(top.v("metadata"), "metadata", metaKeys, nil)
	s.Name, s.Description = r.str(meta.v("name"), "metadata.name"), r.str(meta.v("description"), "metadata.description")
	if s.Name == "" {
		s.Name = filepath.Base(filepath.Dir(abs))
	}
	if top.has("spec") {
		r.spec(s, top.v("spec"))
	}
	r.imports(s, top.v("imports"), append(stack, abs))
	if !top.has("spec") && !top.has("imports") {
		r.errorf(&root, "", "an E2E spec needs spec: (katalog, cr and expect) or imports: (a suite)")
	}
	return s
}

func orNode(n, fallback *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return fallback
}

func (r *reader) spec(s *Spec, n *yaml.Node) {
	f := r.mapping(n, "spec", append(specKeys, "init"), specIgnored)
	if f.has("init") {
		r.errorf(f["init"].key, "spec.init", "init: (upstream's example packs for its own CI) is not supported; name the files with katalog:, crd: and cr:")
	}
	s.Katalog = r.existing(f.v("katalog"), "spec.katalog", r.dir)
	if p := r.existing(f.v("crd"), "spec.crd", r.dir); p != "" {
		s.CRDs = append(s.CRDs, p)
	}
	for i, it := range r.items(f.v("crdFiles"), "spec.crdFiles") {
		s.CRDs = append(s.CRDs, r.existing(it, fmt.Sprintf("spec.crdFiles[%d]", i), r.dir))
	}
	if p := r.existing(f.v("cr"), "spec.cr", r.dir); p != "" {
		s.CRs = append(s.CRs, p)
	}
	for i, it := range r.items(f.v("crFiles"), "spec.crFiles") {
		s.CRs = append(s.CRs, r.existing(it, fmt.Sprintf("spec.crFiles[%d]", i), r.dir))
	}
	r.custom(s, f)
	if f.has("cluster") {
		c := r.mapping(f.v("cluster"), "spec.cluster", clusterKeys, nil)
		s.Cluster = ClusterSpec{Pos: r.pos(f.v("cluster")), Provider: r.str(c.v("provider"), "spec.cluster.provider"),
			Name: r.str(c.v("name"), "spec.cluster.name"), Reuse: r.boolean(c.v("reuse"), "spec.cluster.reuse")}
		switch s.Cluster.Provider {
		case "", "kind", "existing":
		default:
			r.errorf(c.v("provider"), "spec.cluster.provider", "provider %q is not known: write kind (a kind cluster when kind is on PATH, else the local control plane) or existing (the cluster of --kubeconfig)", s.Cluster.Provider)
		}
	}
	r.setup(&s.Setup, f.v("setup"))
	if f.has("notes") {
		notes, diags := katalog.DecodeNotes(r.file, f.v("notes"))
		*r.diags = append(*r.diags, diags...)
		s.Notes = notes
	}
	s.Expect = r.expectations(f.v("expect"), "spec.expect", r.dir, true)
	if en := resolve(f.v("expect")); en == nil || en.Kind == yaml.SequenceNode && len(en.Content) == 0 {
		r.errorf(orNode(en, n), "spec.expect", "the spec has no expectations: add expect: entries")
	}
	if f.has("onFailure") {
		s.OnFailure = r.onFailure(f.v("onFailure"), "spec.onFailure", r.dir)
	}
	r.checkLifecycle(s, f)
}

func (r *reader) custom(s *Spec, f fields) {
	if f.has("customOperator") {
		s.Custom = r.boolean(f.v("customOperator"), "spec.customOperator")
	}
	if !f.has("custom") {
		return
	}
	c := r.mapping(f.v("custom"), "spec.custom", []string{"target"}, nil)
	switch t := r.str(c.v("target"), "spec.custom.target"); t {
	case "kubernetes":
		s.Custom = true
	case "container":
		r.errorf(c.v("target"), "spec.custom.target", "target container is reserved upstream and not implemented there either; write kubernetes")
	default:
		r.errorf(orNode(c.v("target"), f.v("custom")), "spec.custom.target", "target %q is not known; write kubernetes (no Orkestra operator runs: the operator under test comes from setup or is in the cluster)", t)
	}
}

// checkLifecycle reports what the expectations need that the spec lacks.
func (r *reader) checkLifecycle(s *Spec, f fields) {
	needsCR := slices.ContainsFunc(s.Expect, func(e *Expectation) bool { return e.After != AfterSetupComplete })
	if needsCR && len(s.CRs) == 0 {
		r.errorf(f["expect"].key, "spec.cr", "expectations run after cr-applied or cr-deleted, but the spec names no custom resource: add cr: (or crFiles:)")
	}
	if s.Katalog == "" && !s.Custom && len(s.Expect) > 0 {
		r.errorf(orNode(f["expect"].key, nil), "spec.katalog", "name the katalog under test with katalog:, or set custom.target: kubernetes when no Orkestra operator runs")
	}
}

func (r *reader) setup(st *Setup, n *yaml.Node) {
	n = resolve(n)
	if isNull(n) {
		return
	}
	if n.Kind == yaml.SequenceNode { // the shorthand: files to apply
		for i, it := range n.Content {
			path := fmt.Sprintf("spec.setup[%d]", i)
			st.Apply = append(st.Apply, &SetupApply{Pos: r.pos(it), Path: r.existing(it, path, r.dir)})
		}
		return
	}
	f := r.mapping(n, "spec.setup", setupKeys, nil)
	for i, it := range r.items(f.v("apply"), "spec.setup.apply") {
		path := fmt.Sprintf("spec.setup.apply[%d]", i)
		a := &SetupApply{Pos: r.pos(it)}
		if it = resolve(it); it != nil && it.Kind == yaml.MappingNode {
			af := r.mapping(it, path, setupApplyKeys, nil)
			a.Path = r.existing(af.v("path"), path+".path", r.dir)
			a.Wait = r.waits(af.v("wait"), path+".wait")
		} else {
			a.Path = r.existing(it, path, r.dir)
		}
		st.Apply = append(st.Apply, a)
	}
	for i, it := range r.items(f.v("helm"), "spec.setup.helm") {
		st.Helm = append(st.Helm, r.helm(it, fmt.Sprintf("spec.setup.helm[%d]", i)))
	}
	st.Wait = r.waits(f.v("wait"), "spec.setup.wait")
}

func (r *reader) helm(n *yaml.Node, path string) *HelmInstall {
	f := r.mapping(n, path, helmKeys, nil)
	h := &HelmInstall{Pos: r.pos(n), Repo: r.str(f.v("repo"), path+".repo"), Chart: r.str(f.v("chart"), path+".chart"),
		Release: r.str(f.v("release"), path+".release"), Namespace: r.str(f.v("namespace"), path+".namespace"),
		Version: r.str(f.v("version"), path+".version"), CreateNamespace: r.boolean(f.v("createNamespace"), path+".createNamespace"),
		Wait: r.waits(f.v("wait"), path+".wait")}
	local := h.Chart == "." || filepath.IsAbs(h.Chart) || len(h.Chart) > 1 && h.Chart[:2] == "./"
	switch {
	case h.Chart == "":
		r.errorf(n, path+".chart", "a Helm step needs chart: (a chart of repo:, or a local path such as ./chart)")
	case local:
		h.Chart = r.existing(f.v("chart"), path+".chart", r.dir)
	case h.Repo == "":
		r.errorf(n, path+".repo", "the remote chart %s needs repo: (the chart repository's URL)", h.Chart)
	}
	for i, it := range r.items(f.v("valueFiles"), path+".valueFiles") {
		v := r.str(it, fmt.Sprintf("%s.valueFiles[%d]", path, i))
		if !hasScheme(v) {
			v = r.existing(it, fmt.Sprintf("%s.valueFiles[%d]", path, i), r.dir)
		}
		h.ValueFiles = append(h.ValueFiles, v)
	}
	if vn := f.v("values"); vn != nil {
		if err := resolve(vn).Decode(&h.Values); err != nil {
			r.errorf(vn, path+".values", "values must be a map of chart values: %v", err)
		}
	}
	if h.Release == "" {
		h.Release = filepath.Base(h.Chart)
	}
	if h.Namespace == "" {
		h.Namespace = "default"
	}
	return h
}

func hasScheme(s string) bool {
	for _, p := range []string{"http://", "https://", "oci://"} {
		if len(s) >= len(p) && s[:len(p)] == p {
			return true
		}
	}
	return false
}

func (r *reader) waits(n *yaml.Node, path string) []*Wait {
	var out []*Wait
	for i, it := range r.items(n, path) {
		p := fmt.Sprintf("%s[%d]", path, i)
		f := r.mapping(it, p, waitKeys, nil)
		w := &Wait{Pos: r.pos(it), Kind: r.str(f.v("kind"), p+".kind"), Name: r.str(f.v("name"), p+".name"),
			Namespace: r.str(f.v("namespace"), p+".namespace"), Ready: r.boolean(f.v("ready"), p+".ready"),
			Timeout: r.duration(f.v("timeout"), p+".timeout")}
		if w.Kind == "" || w.Name == "" {
			r.errorf(it, p, "a wait needs kind: and name:")
		}
		if w.Timeout == 0 {
			w.Timeout = 30 * time.Second
		}
		out = append(out, w)
	}
	return out
}

func (r *reader) imports(s *Spec, n *yaml.Node, stack []string) {
	for i, it := range r.items(n, "imports") {
		path := fmt.Sprintf("imports[%d]", i)
		imp := &Import{Pos: r.pos(it)}
		pathNode := it
		if it = resolve(it); it != nil && it.Kind == yaml.MappingNode {
			f := r.mapping(it, path, importKeys, nil)
			pathNode = f.v("path")
			imp.FreshCluster = r.boolean(f.v("freshCluster"), path+".freshCluster")
			imp.Wait = r.duration(f.v("wait"), path+".wait")
			if pathNode == nil {
				r.errorf(it, path, "an import needs path: (another E2E spec)")
				continue
			}
		}
		imp.Path = r.existing(pathNode, path, r.dir)
		if imp.Path == "" {
			continue
		}
		abs, _ := filepath.Abs(imp.Path)
		switch {
		case slices.Contains(stack, abs):
			r.errorf(pathNode, path, "%s imports itself (through %s); remove the cycle", imp.Path, stack[len(stack)-1])
			continue
		case len(stack) > MaxImportDepth:
			r.errorf(pathNode, path, "imports nest deeper than %d", MaxImportDepth)
			continue
		}
		if _, err := os.Stat(imp.Path); err != nil {
			continue // reported by existing
		}
		imp.Spec = parse(imp.Path, r.diags, stack)
		s.Imports = append(s.Imports, imp)
	}
}
