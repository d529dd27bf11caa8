package gotmpl

import (
	"fmt"
	"sort"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Field references are checked against the structural schema of the
// version the template runs on. The root is the whole object: apiVersion,
// kind, full ObjectMeta and the schema's own properties (spec, status, …).

func typed(t string) structuralschema.Structural {
	return structuralschema.Structural{Generic: structuralschema.Generic{Type: t}}
}

func stringMap() structuralschema.Structural {
	s := typed("string")
	return structuralschema.Structural{
		Generic:              structuralschema.Generic{Type: "object"},
		AdditionalProperties: &structuralschema.StructuralOrBool{Bool: true, Structural: &s},
	}
}

func listOf(item structuralschema.Structural) structuralschema.Structural {
	return structuralschema.Structural{Generic: structuralschema.Generic{Type: "array"}, Items: &item}
}

func anyObject() structuralschema.Structural {
	return structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}
}

// metadataSchema is ObjectMeta as templates see it.
var metadataSchema = structuralschema.Structural{
	Generic: structuralschema.Generic{Type: "object"},
	Properties: map[string]structuralschema.Structural{
		"name":                       typed("string"),
		"generateName":               typed("string"),
		"namespace":                  typed("string"),
		"uid":                        typed("string"),
		"resourceVersion":            typed("string"),
		"selfLink":                   typed("string"),
		"generation":                 typed("integer"),
		"creationTimestamp":          typed("string"),
		"deletionTimestamp":          typed("string"),
		"deletionGracePeriodSeconds": typed("integer"),
		"labels":                     stringMap(),
		"annotations":                stringMap(),
		"finalizers":                 listOf(typed("string")),
		"ownerReferences":            listOf(anyObject()),
		"managedFields":              listOf(anyObject()),
	},
}

// rootSchema adds apiVersion, kind and ObjectMeta to a version's schema.
func rootSchema(self *structuralschema.Structural) *structuralschema.Structural {
	if self == nil {
		return nil
	}
	r := *self
	r.Properties = make(map[string]structuralschema.Structural, len(self.Properties)+3)
	for k, v := range self.Properties {
		r.Properties[k] = v
	}
	r.Properties["apiVersion"] = typed("string")
	r.Properties["kind"] = typed("string")
	r.Properties["metadata"] = metadataSchema
	if r.Type == "" {
		r.Type = "object"
	}
	return &r
}

// Keys of the original engine's template data that are not part of the
// object; this runtime does not provide them.
var foreignRoots = map[string]bool{"children": true, "item": true, "cross": true, "external": true, "inputs": true, "git": true, "docker": true, "metrics": true, "health": true, "value": true, "request": true, "previous": true, "key": true, "index": true, "sentinels": true, "event": true}

// childKeyNames are the keys of .children (katalog.KindSpec.Children): the
// plural and singular name of every child kind.
var childKeyNames = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range katalog.ResourceKinds {
		m[k.Children.Plural], m[k.Children.Singular] = true, true
	}
	return m
}()

func childKeyHint(seg string) string {
	names := make([]string, 0, len(childKeyNames))
	for n := range childKeyNames {
		names = append(names, n)
	}
	sort.Strings(names)
	if d := katalog.DidYouMean(seg, names); d != "" {
		return d
	}
	return "; it holds the children by kind: " + strings.Join(names, ", ") + " (the plural maps name → object, the singular is the first by name)"
}

// shape is what a template value is known to be: its schema (nil: unknown,
// anything goes) and its path from the object root, for messages.
type shape struct {
	s    *structuralschema.Structural
	path string
	root bool
	// children: the .children root, keyed by child kind.
	children bool
}

// fieldProblem says why a field reference is wrong.
type fieldProblem struct {
	kind problemKind
	msg  string
	// typo: a declared field is spelled alike (the message suggests it).
	typo bool
}

type problemKind int

const (
	unknownField problemKind = iota // no such field: "unknown field REF: MSG"
	noFields                        // a scalar or list has no fields: "REF: MSG"
	foreignRoot                     // .children and friends: MSG alone
	absentKey                       // read as absent, as upstream does: a warning, MSG alone
)

// child looks seg up below sh.
func child(sh shape, seg, version string) (shape, *fieldProblem) {
	next := sh.path + "." + seg
	if sh.root {
		next = seg
	}
	if sh.children {
		if !childKeyNames[seg] {
			for k := range childKeyNames {
				if strings.EqualFold(k, seg) {
					// Upstream's examples write the kind's key
					// (.children.networkPolicies), which upstream reads as
					// absent; so does this runtime, with a warning.
					return shape{}, &fieldProblem{kind: absentKey, msg: fmt.Sprintf(".children has no key %q (its keys are lower-case: %q), so it always reads as absent, as upstream reads it; write .children.%s", seg, k, k)}
				}
			}
			return shape{}, &fieldProblem{kind: foreignRoot, msg: fmt.Sprintf(".children has no key %q%s", seg, childKeyHint(seg))}
		}
		return shape{path: next}, nil
	}
	s := sh.s
	if sh.root && foreignRoots[seg] {
		if s == nil || !hasProperty(s, seg) {
			return shape{}, &fieldProblem{kind: foreignRoot, msg: "." + seg + " is not available in this runtime: templates see the custom resource itself (.metadata, .spec, .status)"}
		}
	}
	if s == nil {
		return shape{path: next}, nil
	}
	if p, ok := s.Properties[seg]; ok {
		return shape{s: &p, path: next}, nil
	}
	if ap := s.AdditionalProperties; ap != nil && (ap.Structural != nil || ap.Bool) {
		return shape{s: ap.Structural, path: next}, nil
	}
	if s.XPreserveUnknownFields {
		return shape{path: next}, nil
	}
	if s.XEmbeddedResource {
		switch seg {
		case "apiVersion", "kind":
			t := typed("string")
			return shape{s: &t, path: next}, nil
		case "metadata":
			return shape{s: &metadataSchema, path: next}, nil
		}
	}
	if sh.path == engine.InputsVar {
		// A motif's inputs are what it declares: any other is a mistake.
		return shape{}, &fieldProblem{kind: foreignRoot, msg: fmt.Sprintf("the motif declares no input %q%s", seg, hint(seg, s))}
	}
	where := "in version " + version
	if version == "" {
		where = "in the schema"
	}
	switch {
	case s.XIntOrString || s.Type == "string" || s.Type == "integer" || s.Type == "number" || s.Type == "boolean":
		return shape{}, &fieldProblem{kind: noFields, msg: sh.path + " is " + engine.DescribeSchema(s) + " " + where + ", which has no fields"}
	case s.Type == "array":
		return shape{}, &fieldProblem{kind: noFields, msg: sh.path + " is a list " + where + "; reach an item with index or range over it"}
	case s.Type == "object" || len(s.Properties) > 0:
		owner := sh.path
		if sh.root {
			owner = "the object"
		}
		h := hint(seg, s)
		return shape{}, &fieldProblem{kind: unknownField, msg: owner + " has no field " + quote(seg) + " " + where + h, typo: strings.Contains(h, "did you mean")}
	}
	return shape{path: next}, nil
}

func hasProperty(s *structuralschema.Structural, name string) bool {
	_, ok := s.Properties[name]
	return ok
}

func hint(seg string, s *structuralschema.Structural) string {
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	if d := katalog.DidYouMean(seg, names); d != "" {
		return d
	}
	if len(names) == 0 {
		return ""
	}
	if len(names) > 12 {
		names = append(names[:12], "…")
	}
	return "; it has " + strings.Join(names, ", ")
}

func quote(s string) string { return "\"" + s + "\"" }

// isComposite reports a schema whose %v printing is Go syntax (map[…], […]).
func isComposite(s *structuralschema.Structural) bool {
	return s != nil && (s.Type == "object" || s.Type == "array")
}
