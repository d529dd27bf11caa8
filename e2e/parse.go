package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/specyaml"
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
	y, root := specyaml.Open(file, diags)
	if root == nil {
		return nil
	}
	r := &reader{y}
	top := r.Mapping(root, "", topKeys, nil)
	if n := top.V("kind"); r.Str(n, "kind") != "E2E" {
		r.Errorf(orNode(n, root), "kind", "kind must be E2E (this is %q); orkestra simulate reads kind: Simulate", r.Str(n, "kind"))
		return nil
	}
	if n := top.V("apiVersion"); n != nil && !slices.Contains(APIVersions, r.Str(n, "apiVersion")) {
		r.Errorf(n, "apiVersion", "apiVersion %q is not an E2E spec's; write %s", r.Str(n, "apiVersion"), APIVersions[0])
	}
	s := &Spec{File: file, Dir: r.Dir}
	meta := r.Mapping(top.V("metadata"), "metadata", metaKeys, nil)
	s.Name, s.Description = r.Str(meta.V("name"), "metadata.name"), r.Str(meta.V("description"), "metadata.description")
	if s.Name == "" {
		s.Name = filepath.Base(r.Dir)
	}
	if top.Has("spec") {
		r.spec(s, top.V("spec"))
	}
	r.imports(s, top.V("imports"), append(stack, filepath.Join(r.Dir, filepath.Base(file))))
	if !top.Has("spec") && !top.Has("imports") {
		r.Errorf(root, "", "an E2E spec needs spec: (katalog, cr and expect) or imports: (a suite)")
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
	f := r.Mapping(n, "spec", append(specKeys, "init"), specIgnored)
	if f.Has("init") {
		r.Errorf(f["init"].Key, "spec.init", "init: (upstream's example packs for its own CI) is not supported; name the files with katalog:, crd: and cr:")
	}
	s.Katalog = r.Existing(f.V("katalog"), "spec.katalog", r.Dir)
	if p := r.Existing(f.V("crd"), "spec.crd", r.Dir); p != "" {
		s.CRDs = append(s.CRDs, p)
	}
	for i, it := range r.Items(f.V("crdFiles"), "spec.crdFiles") {
		s.CRDs = append(s.CRDs, r.Existing(it, fmt.Sprintf("spec.crdFiles[%d]", i), r.Dir))
	}
	if p := r.Existing(f.V("cr"), "spec.cr", r.Dir); p != "" {
		s.CRs = append(s.CRs, p)
	}
	for i, it := range r.Items(f.V("crFiles"), "spec.crFiles") {
		s.CRs = append(s.CRs, r.Existing(it, fmt.Sprintf("spec.crFiles[%d]", i), r.Dir))
	}
	r.custom(s, f)
	if f.Has("cluster") {
		c := r.Mapping(f.V("cluster"), "spec.cluster", clusterKeys, nil)
		s.Cluster = ClusterSpec{Pos: r.Pos(f.V("cluster")), Provider: r.Str(c.V("provider"), "spec.cluster.provider"),
			Name: r.Str(c.V("name"), "spec.cluster.name"), Reuse: r.Bool(c.V("reuse"), "spec.cluster.reuse")}
		switch s.Cluster.Provider {
		case "", "kind", "existing":
		default:
			r.Errorf(c.V("provider"), "spec.cluster.provider", "provider %q is not known: write kind (a kind cluster when kind is on PATH, else the local control plane) or existing (the cluster of --kubeconfig)", s.Cluster.Provider)
		}
	}
	r.setup(&s.Setup, f.V("setup"))
	if f.Has("notes") {
		notes, diags := katalog.DecodeNotes(r.File, f.V("notes"))
		*r.Diags = append(*r.Diags, diags...)
		s.Notes = notes
	}
	s.Expect = r.expectations(f.V("expect"), "spec.expect", r.Dir, true)
	if en := specyaml.Resolve(f.V("expect")); en == nil || en.Kind == yaml.SequenceNode && len(en.Content) == 0 {
		r.Errorf(orNode(en, n), "spec.expect", "the spec has no expectations: add expect: entries")
	}
	if f.Has("onFailure") {
		s.OnFailure = r.onFailure(f.V("onFailure"), "spec.onFailure", r.Dir)
	}
	r.checkLifecycle(s, f)
}

func (r *reader) custom(s *Spec, f fields) {
	if f.Has("customOperator") {
		s.Custom = r.Bool(f.V("customOperator"), "spec.customOperator")
	}
	if !f.Has("custom") {
		return
	}
	c := r.Mapping(f.V("custom"), "spec.custom", []string{"target"}, nil)
	switch t := r.Str(c.V("target"), "spec.custom.target"); t {
	case "kubernetes":
		s.Custom = true
	case "container":
		r.Errorf(c.V("target"), "spec.custom.target", "target container is reserved upstream and not implemented there either; write kubernetes")
	default:
		r.Errorf(orNode(c.V("target"), f.V("custom")), "spec.custom.target", "target %q is not known; write kubernetes (no Orkestra operator runs: the operator under test comes from setup or is in the cluster)", t)
	}
}

// checkLifecycle reports what the expectations need that the spec lacks.
func (r *reader) checkLifecycle(s *Spec, f fields) {
	needsCR := slices.ContainsFunc(s.Expect, func(e *Expectation) bool { return e.After != AfterSetupComplete })
	if needsCR && len(s.CRs) == 0 {
		r.Errorf(f["expect"].Key, "spec.cr", "expectations run after cr-applied or cr-deleted, but the spec names no custom resource: add cr: (or crFiles:)")
	}
	if s.Katalog == "" && !s.Custom && len(s.Expect) > 0 {
		r.Errorf(orNode(f["expect"].Key, nil), "spec.katalog", "name the katalog under test with katalog:, or set custom.target: kubernetes when no Orkestra operator runs")
	}
}

func (r *reader) setup(st *Setup, n *yaml.Node) {
	n = specyaml.Resolve(n)
	if specyaml.IsNull(n) {
		return
	}
	if n.Kind == yaml.SequenceNode { // the shorthand: files to apply
		for i, it := range n.Content {
			path := fmt.Sprintf("spec.setup[%d]", i)
			st.Apply = append(st.Apply, &SetupApply{Pos: r.Pos(it), Path: r.Existing(it, path, r.Dir)})
		}
		return
	}
	f := r.Mapping(n, "spec.setup", setupKeys, nil)
	for i, it := range r.Items(f.V("apply"), "spec.setup.apply") {
		path := fmt.Sprintf("spec.setup.apply[%d]", i)
		a := &SetupApply{Pos: r.Pos(it)}
		if it = specyaml.Resolve(it); it != nil && it.Kind == yaml.MappingNode {
			af := r.Mapping(it, path, setupApplyKeys, nil)
			a.Path = r.Existing(af.V("path"), path+".path", r.Dir)
			a.Wait = r.waits(af.V("wait"), path+".wait")
		} else {
			a.Path = r.Existing(it, path, r.Dir)
		}
		st.Apply = append(st.Apply, a)
	}
	for i, it := range r.Items(f.V("helm"), "spec.setup.helm") {
		st.Helm = append(st.Helm, r.helm(it, fmt.Sprintf("spec.setup.helm[%d]", i)))
	}
	st.Wait = r.waits(f.V("wait"), "spec.setup.wait")
}

func (r *reader) helm(n *yaml.Node, path string) *HelmInstall {
	f := r.Mapping(n, path, helmKeys, nil)
	h := &HelmInstall{Pos: r.Pos(n), Repo: r.Str(f.V("repo"), path+".repo"), Chart: r.Str(f.V("chart"), path+".chart"),
		Release: r.Str(f.V("release"), path+".release"), Namespace: r.Str(f.V("namespace"), path+".namespace"),
		Version: r.Str(f.V("version"), path+".version"), CreateNamespace: r.Bool(f.V("createNamespace"), path+".createNamespace"),
		Wait: r.waits(f.V("wait"), path+".wait")}
	local := h.Chart == "." || filepath.IsAbs(h.Chart) || len(h.Chart) > 1 && h.Chart[:2] == "./"
	switch {
	case h.Chart == "":
		r.Errorf(n, path+".chart", "a Helm step needs chart: (a chart of repo:, or a local path such as ./chart)")
	case local:
		h.Chart = r.Existing(f.V("chart"), path+".chart", r.Dir)
	case h.Repo == "":
		r.Errorf(n, path+".repo", "the remote chart %s needs repo: (the chart repository's URL)", h.Chart)
	}
	for i, it := range r.Items(f.V("valueFiles"), path+".valueFiles") {
		v := r.Str(it, fmt.Sprintf("%s.valueFiles[%d]", path, i))
		if !hasScheme(v) {
			v = r.Existing(it, fmt.Sprintf("%s.valueFiles[%d]", path, i), r.Dir)
		}
		h.ValueFiles = append(h.ValueFiles, v)
	}
	if vn := f.V("values"); vn != nil {
		if err := specyaml.Resolve(vn).Decode(&h.Values); err != nil {
			r.Errorf(vn, path+".values", "values must be a map of chart values: %v", err)
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
	for i, it := range r.Items(n, path) {
		p := fmt.Sprintf("%s[%d]", path, i)
		f := r.Mapping(it, p, waitKeys, nil)
		w := &Wait{Pos: r.Pos(it), Kind: r.Str(f.V("kind"), p+".kind"), Name: r.Str(f.V("name"), p+".name"),
			Namespace: r.Str(f.V("namespace"), p+".namespace"), Ready: r.Bool(f.V("ready"), p+".ready"),
			Timeout: r.Duration(f.V("timeout"), p+".timeout")}
		if w.Kind == "" || w.Name == "" {
			r.Errorf(it, p, "a wait needs kind: and name:")
		}
		if w.Timeout == 0 {
			w.Timeout = 30 * time.Second
		}
		out = append(out, w)
	}
	return out
}

func (r *reader) imports(s *Spec, n *yaml.Node, stack []string) {
	for i, it := range r.Items(n, "imports") {
		path := fmt.Sprintf("imports[%d]", i)
		imp := &Import{Pos: r.Pos(it)}
		pathNode := it
		if it = specyaml.Resolve(it); it != nil && it.Kind == yaml.MappingNode {
			f := r.Mapping(it, path, importKeys, nil)
			pathNode = f.V("path")
			imp.FreshCluster = r.Bool(f.V("freshCluster"), path+".freshCluster")
			imp.Wait = r.Duration(f.V("wait"), path+".wait")
			if pathNode == nil {
				r.Errorf(it, path, "an import needs path: (another E2E spec)")
				continue
			}
		}
		imp.Path = r.Existing(pathNode, path, r.Dir)
		if imp.Path == "" {
			continue
		}
		abs, _ := filepath.Abs(imp.Path)
		switch {
		case slices.Contains(stack, abs):
			r.Errorf(pathNode, path, "%s imports itself (through %s); remove the cycle", imp.Path, stack[len(stack)-1])
			continue
		case len(stack) > MaxImportDepth:
			r.Errorf(pathNode, path, "imports nest deeper than %d", MaxImportDepth)
			continue
		}
		if _, err := os.Stat(imp.Path); err != nil {
			continue // reported by existing
		}
		imp.Spec = parse(imp.Path, r.Diags, stack)
		s.Imports = append(s.Imports, imp)
	}
}
