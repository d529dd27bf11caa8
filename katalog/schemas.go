package katalog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// Where an entry's schema comes from, in order: its crdFile; a manifest given
// with --crd; the cluster (orkestra run, or --kubeconfig); a built-in
// Kubernetes kind; else an untyped stand-in built from apiTypes, so that a
// katalog written for upstream (which reads the schema from the cluster, or
// runs untyped) still loads offline — with one warning per entry saying how
// to restore typing.

// resolveCRDs finds every entry's CRD and completes its apiTypes.
func (l *loader) resolveCRDs(opts Options) {
	pool := l.flagCRDs(opts.CRDs)
	fetched := map[schema.GroupKind]*CRD{}
	var untyped []*CRDEntry
	for _, e := range l.k.CRDs {
		d := l.decoder(e.Pos.File)
		d.entry = e.Name
		switch {
		case e.CRDFile != "":
			if err := l.confine(e.CRDFile); err != nil {
				d.errorAt(e.CRDFilePos, "crdFile", "CRD manifest %v", err)
				continue
			}
			crd, err := loadCRD(e.CRDFile, e.APITypes, l.crds)
			if err != nil {
				d.errorAt(e.CRDFilePos, "crdFile", "%v", err)
				continue
			}
			e.CRD = crd
		case e.APITypes.Kind == "" && e.APITypes.Group == "":
			d.errorAt(e.Pos, "apiTypes", "the entry names no CRD: add crdFile: ./crd.yaml (apiTypes are then read from it), or apiTypes with group, version and kind")
			continue
		default:
			crd, err := d.findCRD(e, pool, fetched, opts.Fetch)
			if err != nil {
				d.errorAt(e.APITypes.posOf("kind", e.Pos), "apiTypes", "%v", err)
				continue
			}
			if crd == nil {
				untyped = append(untyped, e)
				continue
			}
			e.CRD = crd
		}
		d.checkAPITypes(e)
		d.checkScope(e)
	}
	l.synthesize(untyped)
	l.resolveObservations(pool, fetched)
}

// flagCRDs loads the --crd manifests (files or directories).
func (l *loader) flagCRDs(paths []string) []*CRD {
	var out []*CRD
	for _, p := range paths {
		files := []string{p}
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			files, _ = filepath.Glob(filepath.Join(p, "*.yaml"))
			more, _ := filepath.Glob(filepath.Join(p, "*.yml"))
			files = append(files, more...)
			sort.Strings(files)
		}
		for _, f := range files {
			crds, err := ReadCRDs(f)
			if err != nil {
				if len(files) > 1 && errors.Is(err, errNoCRD) {
					continue // a directory may hold other manifests
				}
				*l.diags = append(*l.diags, Diagnostic{Pos: Pos{File: f}, Message: fmt.Sprintf("--crd: %v", err)})
				continue
			}
			for _, obj := range crds {
				c, err := newCRD(f, obj)
				if err != nil {
					*l.diags = append(*l.diags, Diagnostic{Pos: Pos{File: f}, Message: fmt.Sprintf("--crd: %v", err)})
					continue
				}
				c.Origin = FromFlag
				out = append(out, c)
			}
		}
	}
	return out
}

// findCRD looks for e's CRD among the --crd manifests, then in the cluster,
// then among the built-in kinds. nil, nil means none: the entry runs untyped.
func (d *decoder) findCRD(e *CRDEntry, pool []*CRD, fetched map[schema.GroupKind]*CRD, fetch func(schema.GroupKind) (*apiextensionsv1.CustomResourceDefinition, error)) (*CRD, error) {
	at := e.APITypes
	var matches []*CRD
	for _, c := range pool {
		if c.Object.Spec.Names.Kind == at.Kind && (at.Group == "" || c.Object.Spec.Group == at.Group) {
			matches = append(matches, c)
		}
	}
	switch {
	case len(matches) == 1:
		return matches[0], nil
	case len(matches) > 1:
		var names []string
		for _, c := range matches {
			names = append(names, c.Object.Spec.Group)
		}
		return nil, fmt.Errorf("several --crd manifests define kind %s (groups %s); add apiTypes.group", at.Kind, strings.Join(names, ", "))
	}
	if b := builtInCRD(at); b != nil {
		return b, nil
	}
	if fetch == nil || at.Group == "" || at.Kind == "" {
		return nil, nil
	}
	gk := schema.GroupKind{Group: at.Group, Kind: at.Kind}
	if c, ok := fetched[gk]; ok {
		return c, nil
	}
	obj, err := fetch(gk)
	if errors.Is(err, ErrCRDNotFound) {
		return nil, fmt.Errorf("the cluster has no CRD for kind %s in group %s; apply it first, or add crdFile so that orkestra dev and manifests install it", at.Kind, at.Group)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the CRD of %s from the cluster: %w", gk, err)
	}
	c, err := newCRD("", obj)
	if err != nil {
		return nil, err
	}
	c.Origin = FromCluster
	fetched[gk] = c
	return c, nil
}

// checkScope compares the entry's `namespaced:` with the CRD's scope.
func (d *decoder) checkScope(e *CRDEntry) {
	if e.Namespaced == nil || e.CRD.Origin == Untyped {
		return
	}
	if crdNS := e.CRD.Object.Spec.Scope != apiextensionsv1.ClusterScoped; crdNS != *e.Namespaced {
		d.errorAt(e.Pos, "namespaced", "namespaced: %t contradicts the scope %s of %s; remove namespaced", *e.Namespaced, e.CRD.Object.Spec.Scope, e.CRD.describe())
	}
}

// describe names where a CRD's definition came from, for messages.
func (c *CRD) describe() string {
	switch c.Origin {
	case FromFile, FromFlag:
		return c.Path
	case FromCluster:
		return "the cluster's CRD " + c.Object.Name
	}
	return c.Origin.String() + " definition of " + c.Object.Spec.Names.Kind
}

// synthesize builds untyped stand-ins, one per group and kind, serving every
// version the katalog names for it.
func (l *loader) synthesize(entries []*CRDEntry) {
	byGK := map[schema.GroupKind][]*CRDEntry{}
	var order []schema.GroupKind
	for _, e := range entries {
		d := l.decoder(e.Pos.File)
		d.entry = e.Name
		missing := false
		for _, f := range []string{"group", "version", "kind"} {
			if _, ok := e.APITypes.FieldPos[f]; !ok {
				d.errorAt(e.APITypes.posOf(f, e.Pos), "apiTypes."+f, "apiTypes.%s is missing and no CRD defines it: add crdFile: ./crd.yaml, or write apiTypes.%s", f, f)
				missing = true
			}
		}
		if missing {
			continue
		}
		gk := schema.GroupKind{Group: e.APITypes.Group, Kind: e.APITypes.Kind}
		if _, ok := byGK[gk]; !ok {
			order = append(order, gk)
		}
		byGK[gk] = append(byGK[gk], e)
	}
	for _, gk := range order {
		l.synthesizeOne(gk, byGK[gk])
	}
}

func (l *loader) synthesizeOne(gk schema.GroupKind, entries []*CRDEntry) {
	first := entries[0]
	d := l.decoder(first.Pos.File)
	d.entry = first.Name
	var versions []string
	storage, plural, namespaced := "", "", true
	for _, e := range entries {
		if !slices.Contains(versions, e.APITypes.Version) {
			versions = append(versions, e.APITypes.Version)
		}
		if e.APITypes.Plural != "" && plural == "" {
			plural = e.APITypes.Plural
		}
		if e.Namespaced != nil {
			namespaced = *e.Namespaced
		}
		if c := e.Conversion; c != nil {
			storage = c.StorageVersion
			for _, p := range c.Paths {
				for _, v := range []string{p.From, p.To} {
					if !slices.Contains(versions, v) {
						versions = append(versions, v)
					}
				}
			}
		}
	}
	if plural == "" {
		guess, _ := meta.UnsafeGuessKindToResource(gk.WithVersion(versions[0]))
		plural = guess.Resource
	}
	if storage == "" {
		if len(versions) > 1 {
			d.errorAt(first.Pos, "", "entries serve %s at %s, but without its CRD nothing says which version is stored; add crdFile: ./crd.yaml, or conversion.storageVersion", gk.Kind, strings.Join(versions, ", "))
			return
		}
		storage = versions[0]
	}
	crd, err := newCRD("", untypedCRD(gk, plural, namespaced, versions, storage))
	if err != nil {
		d.errorAt(first.Pos, "", "%v", err)
		return
	}
	crd.Origin = Untyped
	for _, e := range entries {
		e.CRD = crd
		e.APITypes.Plural = crd.Object.Spec.Names.Plural
		*l.diags = append(*l.diags, Diagnostic{Pos: e.Pos, Severity: Warning, Entry: e.Name, Message: fmt.Sprintf("no schema for %s.%s: the entry has no crdFile and no CRD was given (--crd) or read from a cluster (--kubeconfig), so its expressions are not type-checked and their cost is not bounded at load; add crdFile: ./crd.yaml, or pass --crd or --kubeconfig to restore typing", gk.Kind, gk.Group)})
	}
}

// untypedSchema accepts any object: the stand-in's versions type nothing.
func untypedSchema() *apiextensionsv1.CustomResourceValidation {
	yes := true
	return &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &yes}}
}

func untypedCRD(gk schema.GroupKind, plural string, namespaced bool, versions []string, storage string) *apiextensionsv1.CustomResourceDefinition {
	scope := apiextensionsv1.NamespaceScoped
	if !namespaced {
		scope = apiextensionsv1.ClusterScoped
	}
	obj := &apiextensionsv1.CustomResourceDefinition{
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: gk.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: gk.Kind, ListKind: gk.Kind + "List", Plural: plural, Singular: strings.ToLower(gk.Kind)},
			Scope: scope,
		},
	}
	obj.Name = plural + "." + gk.Group
	obj.APIVersion, obj.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
	for _, v := range versions {
		obj.Spec.Versions = append(obj.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{
			Name: v, Served: true, Storage: v == storage, Schema: untypedSchema(),
			Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
		})
	}
	return obj
}

// clusterScopedBuiltIns are the built-in kinds that are not namespaced.
var clusterScopedBuiltIns = []string{
	"Namespace", "Node", "PersistentVolume", "ClusterRole", "ClusterRoleBinding", "StorageClass",
	"PriorityClass", "IngressClass", "RuntimeClass", "CSIDriver", "CSINode", "VolumeAttachment",
	"CertificateSigningRequest", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
	"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy",
	"MutatingAdmissionPolicyBinding", "CustomResourceDefinition", "APIService", "FlowSchema",
	"PriorityLevelConfiguration",
}

// builtInCRD returns a stand-in for a built-in Kubernetes kind used as an
// entry's primary resource (upstream: `apiTypes: {kind: Namespace}`), or nil
// when the kind is not built in. Its group and version are the preferred
// ones Kubernetes serves it at.
func builtInCRD(at APITypes) *CRD {
	s := clientgoscheme.Scheme
	for _, gv := range s.PrioritizedVersionsAllGroups() {
		if at.Group != "" && gv.Group != at.Group || at.Version != "" && gv.Version != at.Version {
			continue
		}
		gvk := gv.WithKind(at.Kind)
		if !s.Recognizes(gvk) {
			continue
		}
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		obj := untypedCRD(gvk.GroupKind(), plural.Resource, !slices.Contains(clusterScopedBuiltIns, at.Kind), []string{gv.Version}, gv.Version)
		obj.Name = plural.GroupResource().String()
		c, err := newCRD("", obj)
		if err != nil {
			return nil
		}
		c.Origin = BuiltIn
		return c
	}
	return nil
}
