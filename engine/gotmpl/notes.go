package gotmpl

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// User-defined notes (the original's top-level `notes:`): a template a
// template calls by name, without arguments, to get its rendering (a
// string: trimmed, `<no value>` removed), computed on the same object. A
// note is checked where it is called, against that place's schema, and
// compiled once per schema; notes may call notes, but not in a cycle.

var _ engine.NotesBackend = (*Backend)(nil)

// noteKey is one compilation of a note: the schema it reads and what the
// place that calls it allows.
type noteKey struct {
	name               string
	self               *structuralschema.Structural
	random, noChildren bool
}

type compiledNote struct {
	t     *Template
	diags katalog.Diagnostics
}

// WithNotes returns a backend whose templates may call notes.
func (b *Backend) WithNotes(notes []*katalog.Note) (engine.LegacyBackend, katalog.Diagnostics) {
	var diags katalog.Diagnostics
	nb := &Backend{cel: b.cel, runtimeLimit: b.runtimeLimit, notes: map[string]*katalog.Note{}, compiledNotes: &sync.Map{}}
	for _, n := range notes {
		errorf := func(format string, args ...any) {
			diags = append(diags, katalog.Diagnostic{Pos: n.NamePos, Field: "notes." + n.Name, Message: fmt.Sprintf(format, args...)})
		}
		switch _, builtin := funcs[n.Name]; {
		case builtin && n.Shadow:
			errorf("the note %s would replace the built-in function %s (shadow: true); this runtime does not let a katalog redefine a built-in: rename the note and call it by its new name", n.Name, n.Name)
			continue
		case builtin:
			errorf("a note named %s would shadow the built-in function %s; rename the note", n.Name, n.Name)
			continue
		case strings.HasPrefix(n.Name, "__"):
			errorf("note names may not start with __")
			continue
		}
		if _, err := Parse(n.Expression.Str); err != nil {
			pe := err.(*ParseError)
			diags = append(diags, katalog.Diagnostic{Pos: posAt(n.Expression.ContentPos(), n.Expression.Str, pe.Offset), Field: "notes." + n.Name + ".expression", Message: pe.Msg})
			continue
		}
		nb.notes[n.Name] = n
	}
	return nb, diags
}

// note checks a call of note n at the checker's place and returns its
// compiled template, nil when it has problems (reported once, at the note).
func (c *checker) note(name string, n *katalog.Note, callOff int) *Template {
	for _, active := range c.noteStack {
		if active == name {
			c.report(callOff, fmt.Sprintf("the note %s calls itself (%s → %s); a note may call other notes, not in a cycle", name, strings.Join(c.noteStack, " → "), name))
			return nil
		}
	}
	key := noteKey{name: name, self: c.self, random: c.random, noChildren: c.noChildren}
	if v, ok := c.b.compiledNotes.Load(key); ok {
		cn := v.(*compiledNote)
		if cn.t == nil {
			c.report(callOff, fmt.Sprintf("the note %s has problems (reported at %s)", name, n.Pos))
		}
		return cn.t
	}
	ctx := &engine.Context{Entry: c.entry, Field: "notes." + name + ".expression", Pos: n.Expression.ContentPos(), Self: c.self, SelfVersion: c.version,
		AllowRandom: c.random, CostLimit: c.costLimit}
	if c.noChildren {
		ctx.Field = "conversion.notes." + name + ".expression"
	}
	t, diags := c.b.compileNote(n.Expression.Str, ctx, append(c.noteStack, name))
	c.b.compiledNotes.Store(key, &compiledNote{t: t, diags: diags})
	c.extra = append(c.extra, diags...)
	if t == nil {
		c.report(callOff, fmt.Sprintf("the note %s has problems (reported at %s)", name, n.Pos))
	}
	return t
}

// note is the note named name, nil when there is none (b may be nil in
// tools that check templates without a backend).
func (b *Backend) note(name string) *katalog.Note {
	if b == nil {
		return nil
	}
	return b.notes[name]
}

// noteFunc is the function a note is called by in one evaluation: it
// renders the note on the data the calling template runs on.
func noteFunc(t *Template, st *execState) func() (string, error) {
	return func() (string, error) {
		out, err := t.exec.run(st.data)
		if err != nil {
			return "", err
		}
		s := finish(out)
		return s, st.chargeValue(reflect.ValueOf(s))
	}
}
