package katalog

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Admission holds an entry's admission rules: upstream's `validation:` and
// `mutation:` sections (or both under `admission:`, its newer layout). The
// engine compiles them into policies the API server runs itself.
type Admission struct {
	Pos        Pos
	Validation []*ValidationRule
	Mutation   []*MutationRule
}

// ValidationRule must hold for an object to be admitted: a structured
// condition (upstream's form) or a CEL expression (`rule:`).
type ValidationRule struct {
	Pos Pos
	// Path is the rule's field path for messages (validation.rules[0]).
	Path string
	// Condition is the structured form; nil for a CEL rule.
	Condition *Condition
	// CEL is the `rule:` form: a CEL boolean over self (and oldSelf,
	// request).
	CEL     *Value
	Message string
	// Warn: action: warn (admitted with a warning); else deny.
	Warn bool
}

// MutationRule sets a field at admission: a default when the field is
// absent (or an empty string, as upstream), or an override always.
type MutationRule struct {
	Pos      Pos
	Path     string
	Field    string
	FieldPos Pos
	Value    *Value
	Override bool
	// ValueType is upstream's valueType (string, int, float, bool); ""
	// when the schema decides.
	ValueType string
}

// Security is upstream's top-level `security:` section.
type Security struct {
	Pos Pos
	// DeletionProtection refuses to delete the katalog's CRDs, and its
	// custom resources and custom children labelled DeletionProtectionLabel.
	DeletionProtection bool
	// NamespaceProtection refuses custom resources outside an entry's
	// allowedNamespaces (or inside its restrictedNamespaces) at admission.
	NamespaceProtection bool
}

// validationKeys are a validation rule's own keys besides the condition's.
var validationKeys = []string{"message", "action", "rule"}

// admission decodes an entry's validation:, mutation: and conversion:,
// each written flat on the entry (the original layout) or under
// admission: (upstream's newest, v0.7.18); one key written both ways is an
// error naming both places. It returns the conversion block, wherever it
// was written, with its field path.
func (d *decoder) admission(e *CRDEntry, o object) (conv field, convPath string) {
	blocks := map[string]field{}
	paths := map[string]string{}
	for _, k := range admissionKeys {
		if f, ok := o[k]; ok {
			blocks[k], paths[k] = f, k
		}
	}
	if f, ok := o["admission"]; ok {
		ao := d.mapping(f.value, "admission", admissionKeys, []string{"webhooks"})
		for _, k := range admissionKeys {
			nf, ok := ao[k]
			if !ok {
				continue
			}
			if flat, both := blocks[k]; both {
				d.writtenTwice(nf.key, "admission."+k, moveOf("admission", k), d.pos(flat.key))
				continue
			}
			blocks[k], paths[k] = nf, "admission."+k
		}
	}
	v, m := blocks["validation"], blocks["mutation"]
	if v.value != nil || m.value != nil {
		a := &Admission{Pos: e.Pos}
		if v.value != nil {
			a.Validation = d.validationRules(v.value, paths["validation"])
		}
		if m.value != nil {
			a.Mutation = d.mutationRules(m.value, paths["mutation"])
		}
		e.Admission = a
	}
	return blocks["conversion"], paths["conversion"]
}

func (d *decoder) validationRules(n *yaml.Node, path string) []*ValidationRule {
	o := d.mapping(n, path, validationBlockKeys, nil)
	var out []*ValidationRule
	for _, it := range d.withIncluded(o, path, "rules", "validation rules fragment") {
		d, ipath, item := it.d, it.path, Resolve(it.node)
		if item == nil || item.Kind != yaml.MappingNode {
			d.errorf(item, ipath, "a validation rule is a map: a condition (field: …) or rule: (CEL), with message: and action:")
			continue
		}
		own, cond := splitKeys(item, validationKeys, []string{"link", "fires"})
		oo := d.mapping(own, ipath, append(validationKeys, "link", "fires"), nil)
		for _, k := range []string{"link", "fires"} {
			if f, ok := oo[k]; ok {
				d.warnf(f.key, ipath+"."+k, "%s: is upstream's reconcile-time bookkeeping; the rule runs in the API server at admission here, so it is ignored", k)
			}
		}
		r := &ValidationRule{Pos: d.pos(item), Path: ipath, Message: d.str(oo["message"].value, ipath+".message")}
		switch action := d.str(oo["action"].value, ipath+".action"); action {
		case "", "deny":
		case "warn":
			r.Warn = true
		default:
			d.errorf(oo["action"].value, ipath+".action", "action must be deny or warn, got %q", action)
		}
		switch {
		case oo.has("rule") && len(cond.Content) > 0:
			d.errorf(item, ipath, "a rule is either rule: (CEL) or a condition (field: …), not both")
			continue
		case oo.has("rule"):
			r.CEL = d.value(oo["rule"].value, ipath+".rule")
			if r.CEL.Kind != StringValue {
				d.errorf(oo["rule"].value, ipath+".rule", "rule: is a CEL boolean expression such as \"self.spec.replicas >= 1\"")
				continue
			}
		default:
			if r.Condition = d.condition(cond, ipath); r.Condition == nil {
				continue
			}
		}
		if r.Message == "" {
			r.Message = fmt.Sprintf("the %s rule at %s does not hold", map[bool]string{true: "warn", false: "deny"}[r.Warn], r.Pos)
		}
		out = append(out, r)
	}
	return out
}

func (d *decoder) mutationRules(n *yaml.Node, path string) []*MutationRule {
	o := d.mapping(n, path, mutationBlockKeys, nil)
	if f, ok := o["mutateFirst"]; ok && !d.boolean(f.value, path+".mutateFirst") {
		d.warnf(f.key, path+".mutateFirst", "the API server always runs mutating policies before validating ones; mutateFirst: false changes nothing here")
	}
	var out []*MutationRule
	for _, it := range d.withIncluded(o, path, "rules", "mutation rules fragment") {
		d, ipath, item := it.d, it.path, it.node
		ro := d.mapping(item, ipath, mutationRuleKeys, nil)
		r := &MutationRule{Pos: d.pos(Resolve(item)), Path: ipath, Field: d.str(ro["field"].value, ipath+".field"), FieldPos: d.pos(ro["field"].value)}
		switch {
		case r.Field == "":
			d.errorf(item, ipath, "a mutation rule needs field: (a dot path such as spec.replicas)")
			continue
		case ro.has("default") == ro.has("override"):
			d.errorf(item, ipath, "a mutation rule needs exactly one of default: (when the field is absent) and override: (always)")
			continue
		case ro.has("override"):
			r.Override, r.Value = true, d.value(ro["override"].value, ipath+".override")
		default:
			r.Value = d.value(ro["default"].value, ipath+".default")
		}
		if f, ok := ro["valueType"]; ok {
			t := strings.ToLower(d.str(f.value, ipath+".valueType"))
			canon, ok := statusTypes[t]
			if !ok || canon == "auto" {
				d.errorf(f.value, ipath+".valueType", "valueType must be string, int, float or bool, got %q", t)
			}
			r.ValueType = canon
		}
		out = append(out, r)
	}
	return out
}

// security decodes the top-level `security:` section.
func (d *decoder) security(n *yaml.Node) {
	o := d.mapping(n, "security", securityKeys, nil)
	s := d.loader.k.Security
	if s == nil {
		s = &Security{Pos: d.pos(Resolve(n))}
		d.loader.k.Security = s
	}
	for _, k := range []string{"webhooks", "conversion", "rbac"} {
		if f, ok := o[k]; ok {
			d.warnf(f.key, "security."+k, "upstream's %s switches configure its own webhook server; here conversion is served by the operator and admission rules run as API-server policies, so they change nothing", k)
		}
	}
	for _, k := range []string{"deletionProtection", "namespaceProtection"} {
		f, ok := o[k]
		if !ok {
			continue
		}
		po := d.mapping(f.value, "security."+k, protectionKeys, nil)
		on := !po.has("enabled") || d.boolean(po["enabled"].value, "security."+k+".enabled")
		for _, x := range []string{"cleanupOnShutdown", "failurePolicy"} {
			if g, ok := po[x]; ok {
				d.warnf(g.key, "security."+k+"."+x, "the protection is an API-server policy here, which needs no webhook to reach (it never fails open) and stays until the katalog drops it; %s changes nothing", x)
			}
		}
		if k == "deletionProtection" {
			s.DeletionProtection = on
		} else {
			s.NamespaceProtection = on
		}
	}
}

// listItem is one item of a list that may come from an include: fragment:
// its decoder (of the file it is in) and path.
type listItem struct {
	d    *decoder
	node *yaml.Node
	path string
}

// withIncluded returns the items of o's list under key: first those of the
// fragment file named by o's include: (a document holding key:, as
// upstream's pkg/types/includes.go reads it), then the block's own.
func (d *decoder) withIncluded(o object, path, key, what string) []listItem {
	var out []listItem
	if f, ok := o["include"]; ok {
		if fd, root := d.fragment(f.value, path+".include", what); root != nil {
			fo := fd.mapping(root, "", []string{key}, nil)
			if !fo.has(key) {
				fd.errorf(root, key, "a %s needs `%s:`", what, key)
			}
			for i, n := range fd.list(fo[key].value, key) {
				out = append(out, listItem{fd, n, fmt.Sprintf("%s[%d]", key, i)})
			}
		}
	}
	for i, n := range d.list(o[key].value, path+"."+key) {
		out = append(out, listItem{d, n, fmt.Sprintf("%s.%s[%d]", path, key, i)})
	}
	return out
}

// list returns the items of a sequence, reporting anything else.
func (d *decoder) list(n *yaml.Node, path string) []*yaml.Node {
	n = Resolve(n)
	if n == nil || isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, "must be a list, got %s", describe(n))
		return nil
	}
	return n.Content
}

// splitKeys splits a mapping into the keys named in own (plus extra) and the
// rest, keeping positions.
func splitKeys(n *yaml.Node, own, extra []string) (mine, rest *yaml.Node) {
	mine = &yaml.Node{Kind: yaml.MappingNode, Line: n.Line, Column: n.Column}
	rest = &yaml.Node{Kind: yaml.MappingNode, Line: n.Line, Column: n.Column}
	for i := 0; i+1 < len(n.Content); i += 2 {
		target := rest
		if k := n.Content[i].Value; contains(own, k) || contains(extra, k) {
			target = mine
		}
		target.Content = append(target.Content, n.Content[i], n.Content[i+1])
	}
	return mine, rest
}

// DeletionProtectionLabel is upstream's deletion-protection label: with
// "true", security.deletionProtection refuses to delete the object, and
// runtime.cleanup never deletes it.
const DeletionProtectionLabel = "orkestra.io/deletion-protection"
