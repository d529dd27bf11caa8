package gotmpl

import (
	"strings"
	"testing"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

func noteDecl(name, expr string, line int) *katalog.Note {
	return &katalog.Note{Name: name, Pos: katalog.Pos{File: "k.yaml", Line: line, Col: 5}, NamePos: katalog.Pos{File: "k.yaml", Line: line, Col: 11},
		Expression: &katalog.Value{Kind: katalog.StringValue, Str: expr, Pos: katalog.Pos{File: "k.yaml", Line: line + 1, Col: 17}}}
}

// notesBackend is a backend with the notes of the upstream examples
// (examples/intermediate/09-notes, use-cases/temporal/01-business-hours):
// zero-argument functions whose value is their template's rendering.
func notesBackend(t *testing.T, notes ...*katalog.Note) *Backend {
	lb, diags := New(nil).WithNotes(notes)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return lb.(*Backend)
}

func TestNotes(t *testing.T) {
	b := notesBackend(t,
		noteDecl("serviceHost", "{{ .metadata.name }}.{{ .metadata.namespace }}.svc.cluster.local", 1),
		noteDecl("url", "  https://{{ serviceHost }}:{{ .spec.port }}  ", 3),
		noteDecl("inBusinessHours", `{{ and weekday (timeInWindow "09:00" "18:00") }}`, 5),
		noteDecl("ready", "{{ allReplicasReady .children.deployment }}", 7),
	)
	cases := []struct{ src, want string }{
		{`{{ serviceHost }}`, "blog.default.svc.cluster.local"},
		{`{{ url }}/`, "https://blog.default.svc.cluster.local:8080/"}, // a note's value is trimmed
		{`{{ toUpper serviceHost }}`, "BLOG.DEFAULT.SVC.CLUSTER.LOCAL"},
		{`{{ if eq inBusinessHours "true" }}open{{ else }}closed{{ end }}`, "open"},
		{`{{ ready }}`, "false"},
	}
	restore := engine.SetClock(func() time.Time { return time.Date(2026, 7, 14, 10, 0, 0, 0, time.UTC) })
	defer restore()
	s := engine.NewScope(testObject())
	s.Children = childrenOf()
	for _, tc := range cases {
		tm, diags := b.compile(tc.src, testCtx(t), forValue)
		if diags.HasErrors() {
			t.Fatalf("%s: %v", tc.src, diags)
		}
		got, err := tm.render(s)
		if err != nil || got != tc.want {
			t.Errorf("%s = %q, %v; want %q", tc.src, got, err, tc.want)
		}
	}
	// A note that reads the clock makes its caller time-dependent.
	tm, _ := b.compile(`{{ inBusinessHours }}`, testCtx(t), forValue)
	if got := tm.NextChange(time.Date(2026, 7, 14, 10, 0, 0, 0, time.UTC)); !got.Equal(time.Date(2026, 7, 14, 18, 0, 0, 0, time.UTC)) {
		t.Errorf("next change %v", got)
	}
}

func TestNoteErrors(t *testing.T) {
	_, diags := New(nil).WithNotes([]*katalog.Note{noteDecl("toUpper", "x", 1), noteDecl("broken", "{{ .spec.image", 3)})
	want := "k.yaml:1:11: notes.toUpper: a note named toUpper would shadow the built-in function toUpper; rename the note\n" +
		"k.yaml:4:17: notes.broken.expression: template syntax error: unclosed action; close it with }}"
	if got := diagString(diags); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	b := notesBackend(t,
		noteDecl("a", "{{ b }}", 1),
		noteDecl("b", "x{{ a }}", 3),
		noteDecl("typo", "{{ .spec.imagee }}", 5),
	)
	cases := []struct{ src, want string }{
		{`{{ a }}`, "k.yaml:10:23: [things] spec.x: the note a has problems (reported at k.yaml:1:5)\n" +
			"k.yaml:2:20: [things] notes.a.expression: the note b has problems (reported at k.yaml:3:5)\n" +
			"k.yaml:4:21: [things] notes.b.expression: the note a calls itself (a → b → a); a note may call other notes, not in a cycle"},
		{`{{ typo }}`, "k.yaml:10:23: [things] spec.x: the note typo has problems (reported at k.yaml:5:5)\n" +
			"k.yaml:6:26: [things] notes.typo.expression: unknown field .spec.imagee: spec has no field \"imagee\" in version v1; did you mean \"image\"?"},
		{`{{ typo "x" }}`, "k.yaml:10:23: [things] spec.x: the note typo has problems (reported at k.yaml:5:5)\nk.yaml:10:23: [things] spec.x: typo takes 0 arguments, got 1"},
	}
	for _, tc := range cases {
		_, diags := b.CompileValue(tc.src, testCtx(t))
		if got := diagString(diags); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.src, got, tc.want)
		}
	}
	// A note is compiled once per place: its problems are reported once.
	_, diags = b.CompileValue(`{{ typo }}`, testCtx(t))
	if strings.Count(diagString(diags), "imagee") != 0 {
		t.Errorf("reported again: %v", diags)
	}
}
