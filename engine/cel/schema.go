package cel

import (
	"sort"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// selfTypeName is the CEL type name of `self`; nested object types are named
// after their path (Self.spec, Self.spec.seo, Self.spec.items.@idx). It is
// capitalised so that a qualified name such as `self.spec` can never resolve
// to a type instead of a field selection.
const selfTypeName = "Self"

// maxRequestSize bounds any value that has no declared bound: nothing larger
// than one API request can reach an expression (as the API server assumes).
const maxRequestSize = apiservercel.DefaultMaxRequestSizeBytes

type kind uint8

const (
	kDyn         kind = iota // no schema: preserve-unknown subtree, untyped field
	kIntOrString             // x-kubernetes-int-or-string (dyn in CEL)
	kObject
	kMap
	kList
	kString
	kInt
	kNumber
	kBool
)

// node is the schema of one position in `self`, prepared for evaluation: the
// lazy value adapter, the fast path of plain references, ToNative and the
// output type checks all walk it. A node tree is immutable once built.
type node struct {
	kind kind
	// path is the user-facing field path from the root ("spec.items[*].name",
	// "" for the root itself).
	path string
	// typeName is the CEL type name of object nodes.
	typeName string
	// byCEL finds a property by any name a CEL expression may use for it: the
	// Kubernetes-escaped identifier (foo__dash__bar, __namespace__) and the
	// name itself (keywords, `backtick` identifiers).
	byCEL map[string]*prop
	// byName finds a property by its name in the data.
	byName map[string]*prop
	// fields are the properties sorted by name.
	fields []*prop
	// preserve: the object keeps fields its schema does not declare; they are
	// visible as dyn values.
	preserve bool
	// elem is the item schema of lists and the value schema of maps.
	elem     *node
	enum     []any
	format   string
	nullable bool
	// What the schema guarantees of a value, for the totality analysis:
	// its pattern and maxLength (-1: none), minItems, and numeric bounds.
	pattern   string
	maxLength int64
	minItems  int64
	minimum   *bound
	maximum   *bound
	// listType and listMapKeys are a list's x-kubernetes-list-type and
	// x-kubernetes-list-map-keys: the API server keeps a set's items, and a
	// list-map's keys, unique.
	listType    string
	listMapKeys []string
	// bound is the keyword that would bound this node's size for cost
	// estimation (maxItems, maxProperties, maxLength) when it is missing.
	bound string
	decl  *apiservercel.DeclType
}

type prop struct {
	name     string // as in the data
	cel      string // Kubernetes-escaped CEL identifier
	required bool
	// defaulted: the schema gives a default, so a stored object has it.
	defaulted bool
	n         *node
}

// bound is a numeric minimum or maximum of a schema.
type bound struct {
	v         float64
	exclusive bool
}

// selfPath is the path as written in an expression: self.spec.replicas.
func (n *node) selfPath() string {
	if n.path == "" {
		return "self"
	}
	if strings.HasPrefix(n.path, "[") {
		return "self" + n.path
	}
	return "self." + n.path
}

// schemaTree is a built `self` type: the node tree, its DeclType and the
// object nodes by CEL type name.
type schemaTree struct {
	root    *node
	byType  map[string]*node
	allName []string // every property name in the tree, for did-you-mean fallbacks
}

// dynNode types values without a schema; dynMap and dynList type the maps and
// lists found inside them.
var dynNode, dynMapNode, dynListNode = func() (*node, *node, *node) {
	d := &node{kind: kDyn, path: "", nullable: true}
	m := &node{kind: kMap, elem: d, nullable: true}
	l := &node{kind: kList, elem: d, nullable: true}
	return d, m, l
}()

// SelfDeclType returns the CEL type of `self` for a custom resource whose
// version has schema s: the schema's own fields, plus apiVersion, kind and
// the full ObjectMeta (name, generateName, namespace, labels, annotations,
// uid, resourceVersion, generation, creationTimestamp, deletionTimestamp,
// finalizers, ownerReferences, …). Subtrees that preserve unknown fields
// without declaring properties, and int-or-string fields, are dyn. MaxElements
// of lists, maps and strings come from maxItems, maxProperties and maxLength,
// else from the API server's maximum request size, as Kubernetes estimates
// them. A nil schema gives an object with ObjectMeta and dyn spec and status.
func SelfDeclType(s *structuralschema.Structural) *apiservercel.DeclType {
	return buildSchemaTree(s).root.decl
}

func buildSchemaTree(s *structuralschema.Structural) *schemaTree {
	t := &schemaTree{byType: map[string]*node{}}
	names := map[string]bool{}
	var root *structuralschema.Structural
	if s == nil {
		root = &structuralschema.Structural{
			Generic: structuralschema.Generic{Type: "object"},
			Properties: map[string]structuralschema.Structural{
				"spec":   {Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}},
				"status": {Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}},
			},
		}
	} else if s.XPreserveUnknownFields {
		// A schemaless resource: spec and status stay reachable as dyn.
		cp := *s
		cp.Properties = map[string]structuralschema.Structural{}
		for k, v := range s.Properties {
			cp.Properties[k] = v
		}
		for _, k := range []string{"spec", "status"} {
			if _, ok := cp.Properties[k]; !ok {
				cp.Properties[k] = structuralschema.Structural{Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}
			}
		}
		root = &cp
	} else {
		root = s
	}
	root = withTypeAndObjectMeta(root)
	b := &treeBuilder{tree: t, names: names}
	t.root = b.build(root, "", selfTypeName)
	for n := range names {
		t.allName = append(t.allName, n)
	}
	sort.Strings(t.allName)
	return t
}

// buildVarTree builds the type of a variable besides self: its schema as it
// is (no ObjectMeta added), dyn without one. Object type names start with the
// variable's name, capitalised, so that they never clash with self's.
func buildVarTree(name string, s *structuralschema.Structural) *schemaTree {
	t := &schemaTree{byType: map[string]*node{}}
	names := map[string]bool{}
	b := &treeBuilder{tree: t, names: names}
	if s == nil {
		s = &structuralschema.Structural{Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}
	}
	t.root = b.build(s, "", "Var_"+name)
	for n := range names {
		t.allName = append(t.allName, n)
	}
	sort.Strings(t.allName)
	return t
}

type treeBuilder struct {
	tree  *schemaTree
	names map[string]bool
}

// withTypeAndObjectMeta returns a shallow copy of s whose properties include
// apiVersion, kind and the full ObjectMeta.
func withTypeAndObjectMeta(s *structuralschema.Structural) *structuralschema.Structural {
	out := *s
	out.Type = "object"
	props := make(map[string]structuralschema.Structural, len(s.Properties)+3)
	for k, v := range s.Properties {
		props[k] = v
	}
	props["apiVersion"] = strSchema(0)
	props["kind"] = strSchema(0)
	props["metadata"] = *objectMetaSchema
	out.Properties = props
	out.AdditionalProperties = nil
	return &out
}

func strSchema(maxLen int64) structuralschema.Structural {
	s := structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}
	if maxLen > 0 {
		s.ValueValidation = &structuralschema.ValueValidation{MaxLength: &maxLen}
	}
	return s
}

func fmtSchema(format string) structuralschema.Structural {
	return structuralschema.Structural{
		Generic:         structuralschema.Generic{Type: "string"},
		ValueValidation: &structuralschema.ValueValidation{Format: format},
	}
}

var (
	intSchema  = structuralschema.Structural{Generic: structuralschema.Generic{Type: "integer"}}
	boolSchema = structuralschema.Structural{Generic: structuralschema.Generic{Type: "boolean"}}
)

func strMapSchema(valueMaxLen int64) structuralschema.Structural {
	v := strSchema(valueMaxLen)
	return structuralschema.Structural{
		Generic:              structuralschema.Generic{Type: "object"},
		AdditionalProperties: &structuralschema.StructuralOrBool{Bool: true, Structural: &v},
	}
}

func listSchema(items structuralschema.Structural) structuralschema.Structural {
	return structuralschema.Structural{Generic: structuralschema.Generic{Type: "array"}, Items: &items}
}

// objectMetaSchema is ObjectMeta as a CEL expression sees it. Bounds are the
// ones the API server validates (DNS subdomain names, label values, UIDs).
var objectMetaSchema = &structuralschema.Structural{
	Generic: structuralschema.Generic{Type: "object"},
	Properties: map[string]structuralschema.Structural{
		"name":                       strSchema(253),
		"generateName":               strSchema(253),
		"namespace":                  strSchema(63),
		"uid":                        strSchema(36),
		"resourceVersion":            strSchema(0),
		"generation":                 intSchema,
		"creationTimestamp":          fmtSchema("date-time"),
		"deletionTimestamp":          fmtSchema("date-time"),
		"deletionGracePeriodSeconds": intSchema,
		"labels":                     strMapSchema(63),
		"annotations":                strMapSchema(0),
		"finalizers":                 listSchema(strSchema(0)),
		"ownerReferences": listSchema(structuralschema.Structural{
			Generic: structuralschema.Generic{Type: "object"},
			Properties: map[string]structuralschema.Structural{
				"apiVersion":         strSchema(0),
				"kind":               strSchema(0),
				"name":               strSchema(253),
				"uid":                strSchema(36),
				"controller":         boolSchema,
				"blockOwnerDeletion": boolSchema,
			},
		}),
		"managedFields": listSchema(structuralschema.Structural{
			Generic:    structuralschema.Generic{Type: "object"},
			Extensions: structuralschema.Extensions{XPreserveUnknownFields: true},
		}),
	},
}

func (b *treeBuilder) build(s *structuralschema.Structural, path, typeName string) *node {
	n := &node{path: path, nullable: s.Nullable, maxLength: -1}
	vv := s.ValueValidation
	if vv != nil {
		n.format = vv.Format
		for _, e := range vv.Enum {
			n.enum = append(n.enum, e.Object)
		}
		n.pattern = vv.Pattern
		if vv.MaxLength != nil {
			n.maxLength = *vv.MaxLength
		}
		if vv.MinItems != nil {
			n.minItems = *vv.MinItems
		}
		if vv.Minimum != nil {
			n.minimum = &bound{*vv.Minimum, vv.ExclusiveMinimum}
		}
		if vv.Maximum != nil {
			n.maximum = &bound{*vv.Maximum, vv.ExclusiveMaximum}
		}
	}
	switch {
	case s.XIntOrString:
		n.kind = kIntOrString
		d := apiservercel.NewSimpleTypeWithMinSize("dyn", cel.DynType, nil, 1)
		if vv != nil && vv.MaxLength != nil {
			d.MaxElements = zeroIfNegative(*vv.MaxLength) * 4
		} else {
			d.MaxElements = maxRequestSize - 2
		}
		n.decl = d
		return n
	case s.XPreserveUnknownFields && len(s.Properties) == 0 && s.AdditionalProperties == nil:
		// Unknown data without declared fields (an embedded resource too):
		// dyn, every field reachable.
		return b.dynInto(n)
	case s.XEmbeddedResource && s.Type == "object":
		s = withTypeAndObjectMeta(s)
	}
	switch s.Type {
	case "object":
		switch {
		case len(s.Properties) > 0:
			return b.object(n, s, typeName)
		case s.AdditionalProperties != nil && (s.AdditionalProperties.Structural != nil || s.AdditionalProperties.Bool):
			n.kind = kMap
			var elem *node
			if s.AdditionalProperties.Structural != nil {
				elem = b.build(s.AdditionalProperties.Structural, path+"[*]", typeName+".@elem")
			} else {
				elem = b.dyn(path + "[*]")
			}
			n.elem = elem
			var maxProps int64
			if vv != nil && vv.MaxProperties != nil {
				maxProps = zeroIfNegative(*vv.MaxProperties)
			} else {
				maxProps = (maxRequestSize - 2) / (elem.decl.MinSerializedSize + 6)
				n.bound = "maxProperties"
			}
			n.decl = apiservercel.NewMapType(apiservercel.StringType, elem.decl, maxProps)
			return n
		case s.XPreserveUnknownFields:
			return b.dynInto(n)
		default:
			// An object without properties: an empty object.
			return b.object(n, s, typeName)
		}
	case "array":
		if s.Items == nil {
			return b.dynInto(n)
		}
		n.kind = kList
		elem := b.build(s.Items, path+"[*]", typeName+".@idx")
		n.elem = elem
		if s.XListType != nil {
			n.listType, n.listMapKeys = *s.XListType, s.XListMapKeys
		}
		var maxItems int64
		if vv != nil && vv.MaxItems != nil {
			maxItems = zeroIfNegative(*vv.MaxItems)
		} else {
			maxItems = (maxRequestSize - 2) / (elem.decl.MinSerializedSize + 1)
			n.bound = "maxItems"
		}
		n.decl = apiservercel.NewListType(elem.decl, maxItems)
		return n
	case "string":
		n.kind = kString
		// Every format stays a string (date-time, duration, byte, …): values
		// round-trip unchanged. Sizes follow the API server's estimates.
		minSize := int64(apiservercel.MinStringSize)
		var maxLen int64
		switch {
		case vv != nil && vv.MaxLength != nil:
			maxLen = zeroIfNegative(*vv.MaxLength) * 4
		case n.format == "duration":
			maxLen = apiservercel.MaxDurationSizeJSON
		case n.format == "date":
			maxLen = apiservercel.JSONDateSize
		case n.format == "date-time":
			maxLen = apiservercel.MaxDatetimeSizeJSON
			minSize = apiservercel.MinDatetimeSizeJSON
		case len(n.enum) > 0:
			for _, e := range n.enum {
				if str, ok := e.(string); ok && int64(len(str)) > maxLen {
					maxLen = int64(len(str))
				}
			}
		default:
			maxLen = maxRequestSize - 2
			n.bound = "maxLength"
		}
		d := apiservercel.NewSimpleTypeWithMinSize("string", cel.StringType, types.String(""), minSize)
		d.MaxElements = maxLen
		n.decl = d
		return n
	case "integer":
		n.kind = kInt
		n.decl = apiservercel.IntType
		return n
	case "number":
		n.kind = kNumber
		n.decl = apiservercel.DoubleType
		return n
	case "boolean":
		n.kind = kBool
		n.decl = apiservercel.BoolType
		return n
	}
	// No type: preserve-unknown-fields, or a schema we cannot type. Either way
	// the value stays reachable as dyn instead of vanishing.
	return b.dynInto(n)
}

func (b *treeBuilder) dyn(path string) *node {
	return b.dynInto(&node{path: path, nullable: true})
}

func (b *treeBuilder) dynInto(n *node) *node {
	n.kind = kDyn
	n.bound = "schema"
	d := apiservercel.NewSimpleTypeWithMinSize("dyn", cel.DynType, nil, 1)
	d.MaxElements = maxRequestSize - 2
	n.decl = d
	return n
}

func (b *treeBuilder) object(n *node, s *structuralschema.Structural, typeName string) *node {
	n.kind = kObject
	n.typeName = typeName
	n.preserve = s.XPreserveUnknownFields
	n.byCEL = make(map[string]*prop, len(s.Properties))
	n.byName = make(map[string]*prop, len(s.Properties))
	required := map[string]bool{}
	if s.ValueValidation != nil {
		for _, r := range s.ValueValidation.Required {
			required[r] = true
		}
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	fields := make(map[string]*apiservercel.DeclField, len(names))
	minSize := int64(2)
	for _, name := range names {
		ps := s.Properties[name]
		escaped, ok := apiservercel.Escape(name)
		childPath := name
		if n.path != "" {
			childPath = n.path + "." + name
		}
		childType := typeName + "." + escaped
		if !ok {
			childType = typeName + "." + name
		}
		child := b.build(&ps, childPath, childType)
		p := &prop{name: name, cel: escaped, required: required[name], defaulted: ps.Default.Object != nil, n: child}
		b.names[name] = true
		n.byName[name] = p
		n.fields = append(n.fields, p)
		var enum []any
		if len(child.enum) > 0 {
			enum = child.enum
		}
		var def any
		if ps.Default.Object != nil {
			def = ps.Default.Object
		}
		if ok {
			n.byCEL[escaped] = p
			fields[escaped] = apiservercel.NewDeclField(escaped, child.decl, required[name], enum, def)
		}
		// The name itself also works: keywords (the type provider maps
		// `namespace` to `__namespace__`) and `backtick` identifiers.
		if name != escaped {
			if _, taken := n.byCEL[name]; !taken {
				n.byCEL[name] = p
			}
			if !isCELKeyword(name) {
				if _, taken := fields[name]; !taken {
					fields[name] = apiservercel.NewDeclField(name, child.decl, required[name], enum, def)
				}
			}
		}
		if required[name] && ps.Default.Object == nil {
			minSize += int64(len(name)) + child.decl.MinSerializedSize + 4
		}
	}
	d := apiservercel.NewObjectType(typeName, fields)
	d.MinSerializedSize = minSize
	n.decl = d
	b.tree.byType[typeName] = n
	return n
}

func zeroIfNegative(v int64) int64 {
	if v < 0 {
		return 0
	}
	return v
}

var celKeywords = map[string]bool{
	"true": true, "false": true, "null": true, "in": true,
	"as": true, "break": true, "const": true, "continue": true, "else": true,
	"for": true, "function": true, "if": true, "import": true, "let": true,
	"loop": true, "package": true, "namespace": true, "return": true,
	"var": true, "void": true, "while": true,
}

func isCELKeyword(s string) bool { return celKeywords[s] }

// prop returns the property a CEL field name refers to.
func (n *node) prop(celName string) *prop {
	if n.byCEL == nil {
		return nil
	}
	return n.byCEL[celName]
}

// fieldNames are the names an expression can use for n's properties, for
// did-you-mean: plain identifiers and keywords as they are, other names in
// backticks.
func (n *node) fieldNames() []string {
	out := make([]string, 0, len(n.fields))
	for _, p := range n.fields {
		out = append(out, celFieldSpelling(p.name))
	}
	return out
}

func celFieldSpelling(name string) string {
	if isIdent(name) {
		return name
	}
	return "`" + name + "`"
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// sizeEstimator estimates the size of values reachable from `self` from the
// DeclType MaxElements, as the API server does for CRD validation rules.
type sizeEstimator struct {
	root *node
	// vars are the variables besides self.
	vars map[string]*schemaTree
}

func (e *sizeEstimator) EstimateSize(element checker.AstNode) *checker.SizeEstimate {
	path := element.Path()
	if len(path) == 0 {
		return fallbackSize(element.Type())
	}
	cur := e.root
	if path[0] != "self" {
		v, ok := e.vars[path[0]]
		if !ok {
			return fallbackSize(element.Type())
		}
		cur = v.root
	}
	for _, step := range path[1:] {
		switch step {
		case "@items", "@values":
			if cur.elem == nil {
				return dynSize(cur)
			}
			cur = cur.elem
		case "@keys":
			if cur.kind != kMap {
				return dynSize(cur)
			}
			// Map keys are strings no longer than the request.
			return &checker.SizeEstimate{Min: 0, Max: uint64(maxRequestSize - 2)}
		default:
			if cur.kind == kMap {
				cur = cur.elem
				continue
			}
			p := cur.prop(step)
			if p == nil {
				return dynSize(cur)
			}
			cur = p.n
		}
	}
	if cur.decl == nil {
		return nil
	}
	return &checker.SizeEstimate{Min: 0, Max: uint64(cur.decl.MaxElements)}
}

// fallbackSize bounds a value whose size CEL cannot derive (the elements of
// a list computed by map(), say) the way the API server bounds schema fields
// without maxLength or maxItems: nothing is larger than one request.
func fallbackSize(t *types.Type) *checker.SizeEstimate {
	if t == nil {
		return nil
	}
	switch t.Kind() {
	case types.StringKind, types.BytesKind, types.DynKind, types.AnyKind:
		return &checker.SizeEstimate{Min: 0, Max: uint64(maxRequestSize - 2)}
	case types.ListKind, types.MapKind:
		return &checker.SizeEstimate{Min: 0, Max: uint64((maxRequestSize - 2) / 2)}
	case types.TypeKind, types.BoolKind, types.IntKind, types.UintKind, types.DoubleKind,
		types.NullTypeKind, types.TimestampKind, types.DurationKind:
		// Scalars (and type values: type(x) == int) compare in constant time.
		return &checker.SizeEstimate{Min: 1, Max: 1}
	}
	return nil
}

// dynSize bounds anything below a dyn node by the request size; anything else
// is unknown to the estimator.
func dynSize(n *node) *checker.SizeEstimate {
	if n.kind == kDyn || n.preserve {
		return &checker.SizeEstimate{Min: 0, Max: uint64(maxRequestSize - 2)}
	}
	return nil
}

func (e *sizeEstimator) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	return nil
}
