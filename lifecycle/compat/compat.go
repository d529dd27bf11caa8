// Package compat compares two revisions of a katalog (`orkestra check
// --against OLD`) and reports what changes break clients or stored objects:
// versions removed or no longer served, the storage version changed, fields
// removed, fields newly required, conversions dropped. Each finding is a
// katalog.Diagnostic at the line of the new revision it is about.
package compat

import (
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// revision is one CRD in one revision of the katalog.
type revision struct {
	crd  *katalog.CRD
	conv *engine.Conversion // nil: no conversion declared
	// entries of the CRD, in katalog order.
	entries []*katalog.CRDEntry
	m       manifest
}

func revisions(p *engine.Plan) (map[string]*revision, []string) {
	out := map[string]*revision{}
	var order []string
	for _, e := range p.Katalog.CRDs {
		if e.CRD == nil || !e.CRD.Typed() {
			continue // no definition of the katalog's to compare
		}
		name := e.CRD.Object.Name
		r := out[name]
		if r == nil {
			r = &revision{crd: e.CRD, conv: p.Conversions[e.CRD.GroupKind()], m: readManifest(e.CRD.Path, name)}
			out[name] = r
			order = append(order, name)
		}
		r.entries = append(r.entries, e)
	}
	return out, order
}

// entryAt names the entry of version v, else the entry declaring the
// conversion, else the first.
func (r *revision) entryAt(v string) string {
	for _, e := range r.entries {
		if e.APITypes.Version == v {
			return e.Name
		}
	}
	for _, e := range r.entries {
		if e.Conversion != nil {
			return e.Name
		}
	}
	return r.entries[0].Name
}

func (r *revision) version(name string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range r.crd.Object.Spec.Versions {
		if r.crd.Object.Spec.Versions[i].Name == name {
			return &r.crd.Object.Spec.Versions[i]
		}
	}
	return nil
}

// webhook reports whether the revision converts through the webhook (whose
// stash carries fields a version cannot hold).
func (r *revision) webhook() bool { return r.conv != nil && !r.conv.Identity }

// Compare returns the findings of going from old to new.
func Compare(old, new *engine.Plan) katalog.Diagnostics {
	olds, _ := revisions(old)
	news, order := revisions(new)
	c := &comparer{}
	for _, name := range order {
		if o := olds[name]; o != nil {
			c.crd(o, news[name])
		}
	}
	_, oldOrder := revisions(old)
	for _, name := range oldOrder {
		if news[name] == nil {
			e := olds[name].entries[0]
			c.add(katalog.Warning, e.Pos, e.Name, "", "CRD %s is no longer in the katalog: orkestra manifests stops installing it, and deleting the CRD from the cluster deletes every object of it", name)
		}
	}
	return c.diags
}

type comparer struct{ diags katalog.Diagnostics }

func (c *comparer) add(sev katalog.Severity, pos katalog.Pos, entry, field, format string, args ...any) {
	c.diags = append(c.diags, katalog.Diagnostic{Pos: pos, Severity: sev, Entry: entry, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (c *comparer) crd(o, n *revision) {
	oldStorage, newStorage := o.crd.StorageVersion, n.crd.StorageVersion
	for _, ov := range o.crd.Object.Spec.Versions {
		nv := n.version(ov.Name)
		field := "spec.versions[" + ov.Name + "]"
		switch {
		case nv == nil && ov.Name == oldStorage:
			c.add(katalog.Error, n.m.versionsPos(), n.entryAt(ov.Name), field,
				"version %s is removed, but it was the storage version: objects are stored at it, and the API server refuses a CRD whose status.storedVersions lists a version missing from spec.versions; keep %s (served: false if need be) until a storage migration has moved every object and orkestra versions says it is safe to remove",
				ov.Name, ov.Name)
		case nv == nil && ov.Served:
			c.add(katalog.Error, n.m.versionsPos(), n.entryAt(ov.Name), field,
				"version %s is removed while it is served: its clients fail, and objects may still be stored at it (the API server refuses the CRD while status.storedVersions lists it); stop serving it first (served: false) and remove it once orkestra versions says it is safe to remove",
				ov.Name)
		case nv == nil:
			c.add(katalog.Warning, n.m.versionsPos(), n.entryAt(ov.Name), field,
				"version %s is removed; the API server refuses the CRD if status.storedVersions still lists it — orkestra versions says whether it is safe to remove",
				ov.Name)
		case ov.Served && !nv.Served && !o.deprecated(ov.Name):
			c.add(katalog.Error, n.m.versionKeyPos(ov.Name, "served"), n.entryAt(ov.Name), field+".served",
				"version %s stops being served without having been deprecated: its clients fail without a warning; mark it deprecated: true (with a deprecationWarning) in one release and stop serving it in a later one",
				ov.Name)
		case ov.Served && !nv.Served:
			c.add(katalog.Warning, n.m.versionKeyPos(ov.Name, "served"), n.entryAt(ov.Name), field+".served",
				"version %s stops being served: clients still using it fail; orkestra versions says whether any conversion to it was seen lately",
				ov.Name)
		}
	}
	if oldStorage != newStorage && n.version(oldStorage) != nil {
		c.add(katalog.Warning, n.m.versionKeyPos(newStorage, "storage"), n.entryAt(newStorage), "spec.versions["+newStorage+"].storage",
			"the storage version changes from %s to %s: objects stay stored at %s until a storage migration rewrites them (orkestra run does it on the leader, or run orkestra storage migrate), and status.storedVersions lists %s until then",
			oldStorage, newStorage, oldStorage, oldStorage)
	}
	for _, ov := range o.crd.Object.Spec.Versions {
		if n.version(ov.Name) != nil {
			c.fields(o, n, ov.Name)
		}
	}
	c.storageCarry(o, n)
	c.conversions(o, n)
}

// deprecated reports whether the revision marks version v deprecated.
func (r *revision) deprecated(v string) bool {
	for _, e := range r.entries {
		if e.APITypes.Version == v && e.Deprecated {
			return true
		}
	}
	ver := r.version(v)
	return ver != nil && ver.Deprecated
}

// fields compares the schema of version v: removed fields and fields newly
// required without a default.
func (c *comparer) fields(o, n *revision, v string) {
	os, ns := o.crd.Schemas[v], n.crd.Schemas[v]
	if os == nil || ns == nil {
		return
	}
	stored := v == o.crd.StorageVersion || v == n.crd.StorageVersion
	entry := n.entryAt(v)
	for _, path := range removed(os, ns) {
		field := "spec.versions[" + v + "].schema"
		name := strings.Join(path, ".")
		pos := n.m.fieldPos(v, path)
		switch {
		case stored:
			c.add(katalog.Error, pos, entry, field,
				"%s is removed from version %s, which objects are stored at: the API server prunes it from every stored object on its next read or write; keep it, or move it to a new version with a conversion that carries it",
				name, v)
		case !n.webhook():
			c.add(katalog.Error, pos, entry, field,
				"%s is removed from version %s and no conversion carries it: objects written at %s lose it; keep the field, or declare a conversion (its stash keeps what a version cannot hold)",
				name, v, v)
		default:
			c.add(katalog.Warning, pos, entry, field,
				"%s is removed from version %s: clients at %s no longer see it; the conversion keeps it for the other versions (in its stash)",
				name, v, v)
		}
	}
	for _, path := range newlyRequired(os, ns) {
		c.add(katalog.Error, n.m.fieldPos(v, path), entry, "spec.versions["+v+"].schema",
			"%s becomes required in version %s without a default: existing objects without it fail validation on their next write (the storage migration's too), and clients that do not send it get 422; give it a default, or leave it optional",
			strings.Join(path, "."), v)
	}
}

// storageCarry reports fields objects stored at the old storage version hold
// that the new storage version cannot, when no conversion carries them.
func (c *comparer) storageCarry(o, n *revision) {
	from, to := o.crd.StorageVersion, n.crd.StorageVersion
	if from == to || n.webhook() || n.version(from) == nil {
		return
	}
	os, ns := o.crd.Schemas[from], n.crd.Schemas[to]
	if os == nil || ns == nil {
		return
	}
	for _, path := range removed(os, ns) {
		c.add(katalog.Error, n.m.fieldPos(to, path), n.entryAt(to), "spec.versions["+to+"].schema",
			"objects stored at %s hold %s, which %s, the new storage version, does not declare, and no conversion carries it: the storage migration drops it; declare a conversion between %s and %s, or add the field to %s",
			from, strings.Join(path, "."), to, from, to, to)
	}
}

// conversions reports a conversion block or paths that are gone.
func (c *comparer) conversions(o, n *revision) {
	if o.conv == nil {
		return
	}
	if n.conv == nil {
		if len(n.crd.Object.Spec.Versions) > 1 && !n.crd.SameSchemas() {
			e := n.entryNamed(o.conversionEntry().Name)
			c.add(katalog.Error, e.Pos, e.Name, "conversion",
				"the conversion of CRD %s is removed while its versions (%s) have different schemas: the API server will only rewrite apiVersion between them; keep the conversion block",
				n.crd.Object.Name, strings.Join(versionNames(n.crd), ", "))
		}
		return
	}
	var pairs [][2]string
	for pair := range o.conv.Paths {
		pairs = append(pairs, pair)
	}
	slices.SortFunc(pairs, func(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) })
	for _, pair := range pairs {
		if n.conv.Paths[pair] != nil || n.version(pair[0]) == nil || n.version(pair[1]) == nil {
			continue
		}
		route, ok := n.conv.Route(pair[0], pair[1])
		if !ok {
			continue // compiling the new katalog reports the unreachable pair
		}
		hops := []string{pair[0]}
		for _, p := range route {
			hops = append(hops, p.To)
		}
		e := n.conversionEntry()
		c.add(katalog.Warning, e.Conversion.Pos, e.Name, "conversion.paths",
			"the path from %s to %s is removed: objects now convert %s through the storage version; check the results (orkestra conformance)",
			pair[0], pair[1], strings.Join(hops, "→"))
	}
}

// entryNamed is the revision's entry called name, else its first.
func (r *revision) entryNamed(name string) *katalog.CRDEntry {
	for _, e := range r.entries {
		if e.Name == name {
			return e
		}
	}
	return r.entries[0]
}

// conversionEntry is the entry declaring the revision's conversion block.
func (r *revision) conversionEntry() *katalog.CRDEntry {
	for _, e := range r.entries {
		if e.Conversion != nil {
			return e
		}
	}
	return r.entries[0]
}

func versionNames(crd *katalog.CRD) []string {
	var out []string
	for _, v := range crd.Object.Spec.Versions {
		out = append(out, v.Name)
	}
	return out
}

// removed returns the paths of fields old declares that new does not (the
// top-most of a removed subtree), skipping those new keeps anyway because
// an enclosing object preserves unknown fields.
func removed(old, new *structuralschema.Structural) [][]string {
	var out [][]string
	var walk func(o, n *structuralschema.Structural, path []string)
	walk = func(o, n *structuralschema.Structural, path []string) {
		if n.XPreserveUnknownFields {
			return
		}
		for _, name := range sortedKeys(o.Properties) {
			if len(path) == 0 && (name == "apiVersion" || name == "kind" || name == "metadata") {
				continue
			}
			op := o.Properties[name]
			np, ok := n.Properties[name]
			p := append(slices.Clip(path), name)
			if !ok {
				out = append(out, p)
				continue
			}
			walk(&op, &np, p)
		}
		if o.Items != nil && n.Items != nil {
			walk(o.Items, n.Items, append(slices.Clip(path), "[*]"))
		}
	}
	walk(old, new, nil)
	return out
}

// newlyRequired returns the paths new requires, without a default, that old
// did not, below objects old already had.
func newlyRequired(old, new *structuralschema.Structural) [][]string {
	var out [][]string
	var walk func(o, n *structuralschema.Structural, path []string)
	walk = func(o, n *structuralschema.Structural, path []string) {
		for _, name := range sortedKeys(n.Properties) {
			np := n.Properties[name]
			p := append(slices.Clip(path), name)
			if slices.Contains(required(n), name) && !slices.Contains(required(o), name) && np.Default.Object == nil {
				out = append(out, p)
			}
			if op, ok := o.Properties[name]; ok {
				walk(&op, &np, p)
			}
		}
		if o.Items != nil && n.Items != nil {
			walk(o.Items, n.Items, append(slices.Clip(path), "[*]"))
		}
	}
	walk(old, new, nil)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func required(s *structuralschema.Structural) []string {
	if s.ValueValidation == nil {
		return nil
	}
	return s.ValueValidation.Required
}
