package katalog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Keys of the original katalog format that this runtime does not implement,
// per level; upstream.go says how each is reported.
var (
	unimplementedTop   = []string{"providers", "crossAccess", "notification", "notifications", "controlCenter", "konfig", "observability", "policy"}
	unimplementedSpec  = []string{"providers", "crossAccess", "notification", "notifications", "gateway", "defaults", "external", "hooks"}
	unimplementedEntry = []string{"mode", "providers", "notification", "notifications", "gateway", "external", "goHooks", "hooks", "leaderElection", "finalizerPolicy", "serve", "enrichAll", "labelSelector", "fieldSelector", "ignoreStatusPatch", "ignoreObservedGeneration", "removeFinalizers", "deletionProtection", "webhooks", "katalogName", "katalogNamespace", "setup"}
	unimplementedBox   = []string{"postReconcile", "when", "or", "goHooks", "hooks", "constructor", "timeouts", "children", "autoscale", "providers", "rollback", "rollBackOnError"}
)

// Options say where the loader may find CRD definitions for entries that do
// not name a crdFile.
type Options struct {
	// CRDs are CRD manifest files or directories (`--crd`); an entry without
	// crdFile takes the one with its group and kind.
	CRDs []string
	// Fetch reads a CRD from the cluster by group and kind (`--kubeconfig`,
	// and `orkestra run`); it returns ErrCRDNotFound when there is none.
	Fetch func(gk schema.GroupKind) (*apiextensionsv1.CustomResourceDefinition, error)
	// AllowOutsidePaths lets crdFile, crFiles and imports name files outside
	// the katalog's directory (`--allow-outside-paths`).
	AllowOutsidePaths bool
	// Overlay holds katalog documents to read instead of the files on
	// disk, by absolute path (`orkestra migrate` checks what it is about to
	// write through it, Komposer imports included).
	Overlay map[string][]byte
	// SamplesNeeded, when set, says why the command reads every crFiles
	// entry ("orkestra dev applies them"): a missing one is then an error.
	// Otherwise it is a warning, as upstream, whose validation never read
	// them (it applied them in dev mode only).
	SamplesNeeded string
}

// ErrCRDNotFound is returned by Options.Fetch when the cluster has no such CRD.
var ErrCRDNotFound = errors.New("no such CustomResourceDefinition")

// Load reads a katalog from one or more paths, as LoadWith with no options.
func Load(paths ...string) (*Katalog, Diagnostics) { return LoadWith(Options{}, paths...) }

// LoadWith reads a katalog from one or more paths. A path may be a file (every
// YAML document in it must be a Katalog or Komposer) or a directory (its
// *.yaml and *.yml files are read; documents of other kinds, such as CRD
// manifests, are skipped). The documents' spec.crds are merged, imports
// resolved, and every entry's CRD found (see resolveCRDs). Diagnostics hold
// every problem found (errors and warnings); the returned Katalog is usable
// only when there are no errors.
func LoadWith(opts Options, paths ...string) (*Katalog, Diagnostics) {
	var diags Diagnostics
	if len(paths) == 0 {
		return nil, Diagnostics{{Message: "no katalog given; pass -f KATALOG.yaml"}}
	}
	k := &Katalog{File: paths[0]}
	l := &loader{k: k, diags: &diags, origin: map[*yaml.Node]string{}, crds: map[string]*CRD{}, opts: opts, bounds: Boundaries(paths),
		profiles: map[string]map[string]*Profile{}}
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			diags = append(diags, Diagnostic{Pos: Pos{File: p}, Message: fmt.Sprintf("cannot read katalog: %v", errors.Unwrap(err))})
			continue
		}
		if !info.IsDir() {
			l.loadFile(p, true)
			continue
		}
		files, _ := filepath.Glob(filepath.Join(p, "*.yaml"))
		more, _ := filepath.Glob(filepath.Join(p, "*.yml"))
		files = append(files, more...)
		sort.Strings(files)
		before := len(k.Docs)
		for _, f := range files {
			l.loadFile(f, false)
		}
		if len(k.Docs) == before {
			diags = append(diags, Diagnostic{Pos: Pos{File: p}, Message: "the directory holds no document of kind Katalog"})
		}
	}
	if len(k.CRDs) == 0 && !diags.HasErrors() {
		diags = append(diags, Diagnostic{Pos: Pos{File: k.File}, Message: "the katalog declares no CRD entries; add spec.crds"})
	}
	l.expandProfiles()
	l.resolveCRDs(opts)
	checkConversions(k, &diags)
	checkDependencies(k, &diags)
	checkChildDependencies(k, &diags)
	checkPatterns(k, &diags, time.Now())
	k.Warnings = diags.Warnings()
	return k, diags
}

// loader holds what one Load shares across files.
type loader struct {
	k     *Katalog
	diags *Diagnostics
	// origin maps every parsed node to the file it was read from, so that a
	// value merged from an imported file keeps its own position.
	origin map[*yaml.Node]string
	crds   map[string]*CRD
	// stack holds the files being composed, to refuse import cycles.
	stack []string
	// aliasNodes counts the values YAML aliases expanded to (MaxAliasNodes).
	aliasNodes int
	opts       Options
	// bounds are where the files the katalog names must resolve
	// (boundary.go); katalogBytes counts the katalog documents read
	// (MaxKatalogBytes).
	bounds       []Boundary
	katalogBytes int
	// profiles are the presets the katalog's files define, by class and
	// name (profiles.go).
	profiles map[string]map[string]*Profile
}

func (l *loader) decoder(file string) *decoder {
	return &decoder{file: file, diags: l.diags, origin: l.origin, loader: l}
}

// parse reads every YAML document of path, recording each node's file.
// readKatalog reads a katalog file, from the overlay when it holds it.
func (l *loader) readKatalog(path string) ([]byte, error) {
	if abs, err := filepath.Abs(path); err == nil {
		if data, ok := l.opts.Overlay[abs]; ok {
			return data, nil
		}
	}
	return readFile(path, "katalog", MaxKatalogBytes)
}

func (l *loader) parse(path string, at *yaml.Node, from string) []*yaml.Node {
	data, err := l.readKatalog(path)
	if err == nil && l.katalogBytes+len(data) > MaxKatalogBytes {
		err = fmt.Errorf("the katalog's documents hold more than %d bytes together with %s (imports included); split the operator into several katalogs", MaxKatalogBytes, path)
	}
	if err != nil {
		pos := Pos{File: path}
		if at != nil {
			pos = Pos{File: from, Line: at.Line, Col: at.Column}
		}
		msg := err.Error()
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			msg = fmt.Sprintf("cannot read katalog: %v", err)
		}
		if errors.Is(err, os.ErrNotExist) {
			msg = fmt.Sprintf("%s not found (paths are relative to the file that names them)", path)
		}
		*l.diags = append(*l.diags, Diagnostic{Pos: pos, Message: msg})
		return nil
	}
	l.katalogBytes += len(data)
	var docs []*yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			*l.diags = append(*l.diags, yamlError(path, err))
			return docs
		}
		l.record(&doc, path)
		docs = append(docs, &doc)
	}
}

func (l *loader) record(n *yaml.Node, file string) {
	l.origin[n] = file
	for _, c := range n.Content {
		l.record(c, file)
	}
}

func (l *loader) loadFile(path string, strict bool) {
	for _, doc := range l.parse(path, nil, "") {
		root := Resolve(doc)
		if root == nil || isNull(root) {
			continue
		}
		kind := docKind(root)
		if !strict && kind != "Katalog" && kind != "Komposer" {
			continue
		}
		k := l.k
		k.Docs = append(k.Docs, &Document{File: path, Root: doc})
		if !contains(k.Files, path) {
			k.Files = append(k.Files, path)
		}
		l.decoder(path).katalog(root, filepath.Dir(path))
	}
}

func docKind(n *yaml.Node) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "kind" {
			return n.Content[i+1].Value
		}
	}
	return ""
}

// yamlError turns a yaml.v3 syntax error ("yaml: line 7: …") into a
// positioned diagnostic.
func yamlError(path string, err error) Diagnostic {
	msg := err.Error()
	line := 0
	if _, scanErr := fmt.Sscanf(strings.TrimPrefix(msg, "yaml: "), "line %d:", &line); scanErr == nil {
		if i := strings.Index(msg, ": "); i >= 0 {
			rest := msg[i+2:]
			if j := strings.Index(rest, ": "); j >= 0 {
				msg = rest[j+2:]
			}
		}
		// yaml.v3 numbers parser errors ("did not find expected …") from 0
		// and scanner errors ("found …") from 1.
		if strings.HasPrefix(msg, "did not find") {
			line++
		}
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	col := 1
	if line == 0 {
		col = 0
	}
	return Diagnostic{Pos: Pos{File: path, Line: line, Col: col}, Message: "YAML syntax error: " + msg}
}

var topKeys = []string{"apiVersion", "kind", "metadata", "spec", "imports", "sources", "gateway", "notes", "security", "profiles", "lifecycle"}

// katalog decodes one Katalog or Komposer document into d.loader's katalog.
func (d *decoder) katalog(root *yaml.Node, dir string) {
	k := d.loader.k
	top := d.mapping(root, "", topKeys, unimplementedTop)
	apiVersion := d.str(top["apiVersion"].value, "apiVersion")
	switch {
	case !top.has("apiVersion"):
		d.errorf(root, "apiVersion", "apiVersion is missing; use %s", APIVersionV1)
	case apiVersion != APIVersionV1 && apiVersion != APIVersionV1Alpha:
		d.errorf(top["apiVersion"].value, "apiVersion", "unsupported apiVersion %q; use %s (or the older %s)", apiVersion, APIVersionV1, APIVersionV1Alpha)
	}
	if k.APIVersion == "" {
		k.APIVersion = apiVersion
	}
	kind := d.str(top["kind"].value, "kind")
	if kind != "Katalog" && kind != "Komposer" {
		d.errorf(orNode(top["kind"].value, root), "kind", "kind must be Katalog (or Komposer, which composes katalogs), got %q", kind)
	}
	meta := d.mapping(top["metadata"].value, "metadata", metadataKeys, []string{"license"})
	if k.Name == "" {
		k.Name = d.str(meta["name"].value, "metadata.name")
		k.Description = d.str(meta["description"].value, "metadata.description")
	}
	d.pattern = nil
	if f, ok := top["lifecycle"]; ok {
		d.pattern = d.patternLifecycle(f, meta, kind == "Komposer")
		k.Patterns = append(k.Patterns, d.pattern)
	}
	if f, ok := top["gateway"]; ok {
		d.gateway(f.value)
	}
	if f, ok := top["security"]; ok {
		d.security(f.value)
	}
	sources := d.sources(top, dir)
	if f, ok := top["profiles"]; ok {
		d.profiles(f.value, "profiles")
	}
	if top.has("notes") {
		// After the imports: a composing document's notes override theirs.
		d.notes(k, top["notes"].value, sources)
	}
	if !top.has("spec") {
		if sources {
			return
		}
		d.errorf(root, "spec", "spec is missing; a katalog needs spec.crds")
		return
	}
	spec := d.mapping(top["spec"].value, "spec", specKeys, unimplementedSpec)
	if f, ok := spec["finalizers"]; ok {
		k.Finalizers = append(k.Finalizers, d.strList(f.value, "spec.finalizers")...)
	}
	if f, ok := spec["imports"]; ok {
		d.specImports(f.value, dir)
	}
	if f, ok := spec["allowedHosts"]; ok {
		d.allowedHosts(k, f)
	}
	crdsNode := Resolve(spec["crds"].value)
	if crdsNode == nil {
		if !sources {
			d.errorf(top["spec"].key, "spec.crds", "spec.crds is missing; declare at least one CRD entry")
		}
		return
	}
	switch crdsNode.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(crdsNode.Content); i += 2 {
			keyNode, body := crdsNode.Content[i], crdsNode.Content[i+1]
			d.crdEntryOrOverride(keyNode.Value, keyNode, body, false, dir, sources)
		}
	case yaml.SequenceNode:
		for i, item := range crdsNode.Content {
			item = Resolve(item)
			name := ""
			var nameNode *yaml.Node
			if item != nil && item.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(item.Content); j += 2 {
					if item.Content[j].Value == "name" {
						nameNode = item.Content[j+1]
						name = nameNode.Value
					}
				}
			}
			if name == "" {
				d.errorf(item, fmt.Sprintf("spec.crds[%d]", i), "a CRD entry in list form needs `name:`")
				continue
			}
			d.crdEntryOrOverride(name, nameNode, item, true, dir, sources)
		}
	default:
		d.errorf(crdsNode, "spec.crds", "spec.crds must be a map of entries keyed by name, or a list of `- name:` entries; got %s", describe(crdsNode))
	}
}

// gateway reports upstream's gateway block. Its endpoint only tells upstream's
// runtime where its separate webhook server is; here /convert is served by
// the operator itself, so that part changes nothing. Its REST API, intake
// webhooks and remote clusters would let others create objects: errors.
func (d *decoder) gateway(n *yaml.Node) {
	o := d.mapping(n, "gateway", gatewayKeys, nil)
	for _, k := range []string{"endpoint", "enabled", "standalone"} {
		if f, ok := o[k]; ok {
			d.warnf(f.key, "gateway."+k, "upstream's separate gateway is not used: this runtime serves /convert itself and its admission rules run in the API server; it is ignored")
		}
	}
	for _, k := range []string{"api", "webhooks", "clusters"} {
		if f, ok := o[k]; ok {
			d.errorf(f.key, "gateway."+k, "upstream's gateway %s lets callers outside Kubernetes RBAC create or change objects, which this runtime does not serve; create the objects with kubectl or your GitOps tool", k)
		}
	}
}

func orNode(n, fallback *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return fallback
}
