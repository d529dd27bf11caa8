package katalog

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// conversion decodes a conversion block found at path: conversion (the
// flat layout) or admission.conversion (upstream's newest).
func (d *decoder) conversion(n *yaml.Node, path string) *Conversion {
	o := d.mapping(n, path, conversionKeys, unimplementedConversion)
	c := &Conversion{Pos: d.pos(Resolve(n)), Path: path}
	c.StorageVersion, c.StoragePos = d.str(o["storageVersion"].value, path+".storageVersion"), d.pos(o["storageVersion"].value)
	list := Resolve(o["paths"].value)
	if list == nil || isNull(list) {
		return c
	}
	if list.Kind != yaml.SequenceNode {
		d.errorf(list, path+".paths", "must be a list of `- from: … / to: …` paths")
		return c
	}
	for i, item := range list.Content {
		ipath := fmt.Sprintf("%s.paths[%d]", path, i)
		po := d.mapping(item, ipath, conversionPathKeys, nil)
		p := &ConversionPath{Pos: d.pos(Resolve(item)), Index: i}
		p.From, p.FromPos = d.str(po["from"].value, ipath+".from"), d.pos(po["from"].value)
		p.To, p.ToPos = d.str(po["to"].value, ipath+".to"), d.pos(po["to"].value)
		if p.From == "" || p.To == "" {
			d.errorf(item, ipath, "a conversion path needs both from: and to: versions")
			continue
		}
		if strings.Contains(p.From, "/") || strings.Contains(p.To, "/") {
			d.errorf(item, ipath, "from and to are bare versions (v1alpha1), not group/version")
			continue
		}
		if p.From == p.To {
			d.errorf(po["to"].value, ipath+".to", "a path from %s to itself is not needed: same-version conversion returns the object unchanged", p.From)
			continue
		}
		if f, ok := po["spec"]; ok {
			p.Spec = d.value(f.value, ipath+".spec")
		}
		if f, ok := po["status"]; ok {
			p.Status = d.value(f.value, ipath+".status")
		}
		if f, ok := po["metadata"]; ok {
			mo := d.mapping(f.value, ipath+".metadata", pathMetadataKeys, nil)
			if lf, ok := mo["labels"]; ok {
				p.Labels = d.value(lf.value, ipath+".metadata.labels")
			}
			if af, ok := mo["annotations"]; ok {
				p.Annotations = d.value(af.value, ipath+".metadata.annotations")
			}
		}
		if f, ok := po["mayFail"]; ok {
			p.MayFail, p.MayFailPos = d.mayFail(f.value, p, ipath+".mayFail"), d.pos(f.value)
		}
		c.Paths = append(c.Paths, p)
	}
	return c
}

// mayFail decodes a path's acknowledgement that it may fail on objects its
// source schema accepts: the reason, a non-empty string. A bare `true` (the
// form other converters take) is refused: the reason is what a reader of
// check, explain and a failed conversion is shown.
func (d *decoder) mayFail(n *yaml.Node, p *ConversionPath, path string) string {
	example := fmt.Sprintf("e.g. mayFail: \"spec.tier is free text at %s; objects whose tier is not a label value do not convert\"", p.From)
	n = Resolve(n)
	switch {
	case n == nil || isNull(n) || n.Kind == yaml.ScalarNode && n.Tag == "!!str" && strings.TrimSpace(n.Value) == "":
		d.errorf(n, path, "mayFail needs the reason the path may fail on objects the %s schema accepts (%s); remove mayFail if it cannot fail", p.From, example)
	case n.Kind != yaml.ScalarNode || n.Tag != "!!str":
		d.errorf(n, path, "mayFail takes the reason as a string, got %s (%s)", describe(n), example)
	default:
		return strings.TrimSpace(n.Value)
	}
	return ""
}

// checkConversions validates conversion blocks against the CRD manifests,
// across entries: versions served, one path per pair, the storage version,
// one conversion block per CRD.
func checkConversions(k *Katalog, diags *Diagnostics) {
	owner := map[*CRD]*CRDEntry{}
	for _, e := range k.CRDs {
		if e.Conversion == nil || e.CRD == nil {
			continue
		}
		c := e.Conversion
		add := func(p Pos, field, format string, args ...any) {
			*diags = append(*diags, Diagnostic{Pos: p, Entry: e.Name, Field: field, Message: fmt.Sprintf(format, args...)})
		}
		if prev, ok := owner[e.CRD]; ok {
			add(c.Pos, c.Path, "the CRD %s already has a conversion block in entry %q (%s); declare all its paths in one entry", e.CRD.Object.Name, prev.Name, prev.Conversion.Pos)
			continue
		}
		owner[e.CRD] = e
		if c.StorageVersion == "" {
			// Optional, as upstream: the CRD says which version it stores.
			c.StorageVersion = e.CRD.StorageVersion
		} else if c.StorageVersion != e.CRD.StorageVersion {
			add(c.StoragePos, c.Path+".storageVersion", "storageVersion %q is not the storage version of CRD %s, which stores %q; make them agree", c.StorageVersion, e.CRD.Object.Name, e.CRD.StorageVersion)
		}
		seen := map[[2]string]*ConversionPath{}
		for _, p := range c.Paths {
			field := fmt.Sprintf("%s.paths[%d]", c.Path, p.Index)
			for _, v := range []struct {
				name string
				pos  Pos
				key  string
			}{{p.From, p.FromPos, "from"}, {p.To, p.ToPos, "to"}} {
				if !e.CRD.Serves(v.name) {
					add(v.pos, field+"."+v.key, "version %q is not served by CRD %s (served: %s)%s", v.name, e.CRD.Object.Name, strings.Join(e.CRD.Served, ", "), DidYouMean(v.name, e.CRD.Served))
				}
			}
			key := [2]string{p.From, p.To}
			if prev, dup := seen[key]; dup {
				add(p.Pos, field, "a second path from %s to %s; the first is at %s — merge them", p.From, p.To, prev.Pos)
				continue
			}
			seen[key] = p
		}
	}
}
