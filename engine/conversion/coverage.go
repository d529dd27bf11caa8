package conversion

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// How a field comes back on the way back (FieldCoverage.Back).
const (
	// BackExact: the way back copies the field back from where the path
	// put it — exact, even after an edit.
	BackExact = "exact"
	// BackStash: the way back writes a literal there or nothing; the
	// original comes from the stash, and no edit at the other version
	// can change it.
	BackStash = "exact through the stash"
	// BackComputed: the way back computes the field; the original comes
	// from the stash while what its expression reads is unchanged, and
	// after an edit at the other version the computed value wins.
	BackComputed = "exact through the stash; lossy after an edit"
	// BackPassThrough: the path does not map this part of the object.
	BackPassThrough = "passes through unchanged"
)

// Coverage is what one path does with every field: where each source field
// goes and how it comes back, and which target fields get a literal.
type Coverage struct {
	CRD  string `json:"crd"`
	From string `json:"from"`
	To   string `json:"to"`
	// At is where the path is declared.
	At       string          `json:"at"`
	Fields   []FieldCoverage `json:"fields"`
	Literals []Literal       `json:"literals,omitempty"`
	// MayFail is the reason the path declares it may fail on objects its
	// source schema accepts (its mayFail), or "".
	MayFail string `json:"mayFail,omitempty"`
	// CanFail are where the path can fail on such objects (check
	// --strict's findings): acknowledged when MayFail is set.
	CanFail []CanFail `json:"canFail,omitempty"`
}

// CanFail is one place where a path can fail on an object its source schema
// accepts.
type CanFail struct {
	Field   string `json:"field"`
	At      string `json:"at"`
	Message string `json:"message"`
	// Acknowledged: the path declares mayFail.
	Acknowledged bool `json:"acknowledged"`
}

// FieldCoverage is one leaf field of the source version.
type FieldCoverage struct {
	Field string `json:"field"`
	// To lists the target fields whose expression reads the field; empty
	// when it has no counterpart (it travels in the stash).
	To []Use `json:"to,omitempty"`
	// Back says how the field comes back from the target version, and
	// BackExpr (with BackAt) the expression of the way back that writes it.
	Back     string `json:"back"`
	BackExpr string `json:"backExpression,omitempty"`
	BackAt   string `json:"backAt,omitempty"`
}

// Use is a target field computed (partly) from a source field.
type Use struct {
	Field      string `json:"field"`
	Expression string `json:"expression"`
	At         string `json:"at"`
}

// Literal is a target field a path sets to a literal.
type Literal struct {
	Field string `json:"field"`
	Value any    `json:"value"`
	At    string `json:"at"`
}

// Coverage explains the direct path from → to of a CRD (by group/kind of
// conv): nil when there is none.
func (c *Converter) Coverage(conv *engine.Conversion, from, to string) *Coverage {
	p := conv.Paths[[2]string{from, to}]
	if p == nil {
		return nil
	}
	cov := &Coverage{CRD: conv.CRD.Object.Name, From: from, To: to, At: p.Source.Pos.String(), MayFail: p.MayFail()}
	for _, d := range p.Findings {
		cov.CanFail = append(cov.CanFail, CanFail{Field: targetField(d.Field), At: d.Pos.String(), Message: d.Message, Acknowledged: d.Severity == katalog.Acknowledged})
	}
	uses := c.uses(p)
	back, _ := conv.Route(to, from)
	var last *engine.Path
	if len(back) > 0 {
		last = back[len(back)-1]
	}
	for _, f := range leafFields(conv.Schemas[from]) {
		fc := FieldCoverage{Field: strings.Join(f, ".")}
		for _, u := range uses {
			if related(u.reads, f) {
				fc.To = append(fc.To, u.use)
			}
		}
		fc.Back, fc.BackExpr, fc.BackAt = c.back(p, last, f)
		cov.Fields = append(cov.Fields, fc)
	}
	cov.Fields = append(cov.Fields, c.metadataReads(p, last, uses)...)
	for _, root := range pathRoots(p) {
		root.node.Walk(func(n *engine.Node) {
			if n.IsLiteral() && n.Literal != nil {
				cov.Literals = append(cov.Literals, Literal{Field: targetField(n.Field), Value: n.Literal, At: n.Pos.String()})
			}
		})
	}
	return cov
}

type use struct {
	reads [][]string
	use   Use
}

// uses lists the computing nodes of p with what they read.
func (c *Converter) uses(p *engine.Path) []use {
	var out []use
	for _, root := range pathRoots(p) {
		root.node.Walk(func(n *engine.Node) {
			in, ok := c.inputs[n]
			if !ok || n.IsList() {
				return
			}
			out = append(out, use{reads: in, use: Use{Field: targetField(n.Field), Expression: n.Expr.Source(), At: n.Expr.Pos().String()}})
		})
	}
	return out
}

// back says how field f comes back on the way back, whose last hop is last.
func (c *Converter) back(p, last *engine.Path, f []string) (string, string, string) {
	if last == nil {
		return BackStash, "", ""
	}
	if (f[0] == "spec" && p.Spec == nil) || (f[0] == "status" && p.Status == nil) {
		return BackPassThrough, "", ""
	}
	n, _ := c.computingNode(last, f)
	if n == nil {
		return BackStash, "", ""
	}
	src, at := "", n.Pos.String()
	if n.Expr != nil {
		src = n.Expr.Source()
	}
	if c.identity[n] {
		return BackExact, src, at
	}
	return BackComputed, src, at
}

// metadataReads lists the labels and annotations path p reads.
func (c *Converter) metadataReads(p, last *engine.Path, uses []use) []FieldCoverage {
	seen := map[string]bool{}
	var out []FieldCoverage
	for _, u := range uses {
		for _, r := range u.reads {
			if len(r) != 3 || r[0] != "metadata" || (r[1] != "labels" && r[1] != "annotations") || seen[pathKey(r)] {
				continue
			}
			seen[pathKey(r)] = true
			fc := FieldCoverage{Field: fmt.Sprintf("metadata.%s[%q]", r[1], r[2])}
			for _, v := range uses {
				if related(v.reads, r) {
					fc.To = append(fc.To, v.use)
				}
			}
			fc.Back, fc.BackExpr, fc.BackAt = c.back(p, last, r)
			out = append(out, fc)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

type pathRoot struct {
	node *engine.Node
}

func pathRoots(p *engine.Path) []pathRoot {
	var out []pathRoot
	for _, n := range []*engine.Node{p.Spec, p.Status, p.Labels, p.Annotations} {
		if n != nil {
			out = append(out, pathRoot{n})
		}
	}
	return out
}

// targetField is a node's field without the path prefix:
// conversion.paths[0].spec.x → spec.x.
func targetField(f string) string {
	if i := strings.Index(f, "]."); i >= 0 && strings.HasPrefix(f, "conversion.paths[") {
		return f[i+2:]
	}
	return f
}

// related reports whether a read path and field f overlap: one is the other
// or lies below it.
func related(reads [][]string, f []string) bool {
	for _, r := range reads {
		n := min(len(r), len(f))
		if slices.Equal(r[:n], f[:n]) {
			return true
		}
	}
	return false
}

// leafFields lists the leaf fields of spec and status in s: scalars, lists
// and maps (objects without declared fields), in order.
func leafFields(s *structuralschema.Structural) [][]string {
	var out [][]string
	var walk func(path []string, s *structuralschema.Structural)
	walk = func(path []string, s *structuralschema.Structural) {
		if s.Type != "object" || len(s.Properties) == 0 {
			out = append(out, append([]string(nil), path...))
			return
		}
		names := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			p := s.Properties[k]
			walk(append(path, k), &p)
		}
	}
	for _, top := range []string{"spec", "status"} {
		if p, ok := s.Properties[top]; ok {
			walk([]string{top}, &p)
		}
	}
	return out
}

// Lines renders the coverage as text, one line per field, aligned.
func (cov *Coverage) Lines() []string {
	var out []string
	width := 0
	for _, f := range cov.Fields {
		width = max(width, len(f.Field))
	}
	for _, f := range cov.Fields {
		out = append(out, cov.FieldLine(f, width))
	}
	for _, l := range cov.Literals {
		out = append(out, fmt.Sprintf("  %-*s  ← literal %v (%s)", width, "("+cov.To+") "+l.Field, l.Value, l.At))
	}
	for _, f := range cov.CanFail {
		how := "can fail here, not acknowledged"
		if f.Acknowledged {
			how = "may fail here (acknowledged)"
		}
		out = append(out, fmt.Sprintf("  %-*s  %s; orkestra check says why at %s", width, "("+cov.To+") "+f.Field, how, f.At))
	}
	return out
}

// Header is the coverage's first line: the path, where it is declared, and
// whether it may fail.
func (cov *Coverage) Header() string {
	h := fmt.Sprintf("%s %s → %s (%s)", cov.CRD, cov.From, cov.To, cov.At)
	switch {
	case cov.MayFail != "":
		h += fmt.Sprintf(" — may fail: %q", cov.MayFail)
	case len(cov.CanFail) > 0:
		h += " — can fail on objects " + cov.From + " accepts, and does not declare mayFail"
	}
	return h
}

// FieldLine renders one field: where it goes and how it comes back.
func (cov *Coverage) FieldLine(f FieldCoverage, width int) string {
	var where string
	switch {
	case len(f.To) == 0 && f.Back == BackPassThrough:
		where = "unchanged at " + cov.To
	case len(f.To) == 0 && f.Back == BackStash:
		return fmt.Sprintf("  %-*s  no counterpart at %s: travels in the stash (exact)", width, f.Field, cov.To)
	case len(f.To) == 0:
		where = "no counterpart at " + cov.To + ": travels in the stash"
	default:
		var parts []string
		for _, u := range f.To {
			parts = append(parts, fmt.Sprintf("%s %s", u.Field, u.Expression))
		}
		where = "→ " + strings.Join(parts, "; ")
	}
	back := f.Back
	if f.BackExpr != "" {
		back += " (back: " + f.BackExpr + ")"
	}
	return fmt.Sprintf("  %-*s  %s; %s", width, f.Field, where, back)
}

// LinesFor are the lines of the fields a failure at field names (a
// conformance diff path such as spec.items[0].name) touches.
func (cov *Coverage) LinesFor(field string) []string {
	want := strings.Split(stripIndexes(field), ".")
	var out []string
	for _, f := range cov.Fields {
		if related([][]string{strings.Split(stripIndexes(f.Field), ".")}, want) {
			out = append(out, cov.FieldLine(f, 0))
			continue
		}
		for _, u := range f.To {
			if related([][]string{strings.Split(stripIndexes(u.Field), ".")}, want) {
				out = append(out, cov.FieldLine(f, 0))
				break
			}
		}
	}
	return out
}

func stripIndexes(p string) string {
	var b strings.Builder
	depth := 0
	for _, r := range p {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}
