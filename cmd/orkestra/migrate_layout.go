package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/conversion"
	"github.com/orkspace/orkestra-cel/engine/gotmpl/migrate"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/objgen"
)

// layoutRun is a layout migration: the files as moved, and the proof.
type layoutRun struct {
	res   *migrate.Result
	moved []migrate.Moved
	// objects is how many custom resources rendered alike.
	objects int
}

// relayout moves the katalog's keys into layout (katalog.LayoutMoves),
// then loads and compiles the moved katalog as check would and proves it
// means what the original does: every sample (crFiles, --sample) and
// count objects generated from each entry's schema render alike (children,
// conditions, status, finalizers, conversion), as do the admission rules
// and the namespace rules. It writes nothing.
func relayout(kf *katalogFlags, layout string, samples []string, count int, seed int64) (*layoutRun, error) {
	before, diags, err := kf.build()
	if err != nil {
		return nil, err
	}
	if before == nil || diags.HasErrors() {
		return nil, &migrate.ProblemsError{What: "the katalog does not check; fix it first", Diags: diags.Errors()}
	}
	run := &layoutRun{res: &migrate.Result{Katalog: before.Katalog}}
	overlay := map[string][]byte{}
	for _, path := range before.Katalog.Files {
		orig, err := kf.read(path)
		if err != nil {
			return nil, err
		}
		out, moved, err := migrate.Relayout(path, orig, layout)
		if err != nil {
			return nil, err
		}
		run.moved = append(run.moved, moved...)
		run.res.Files = append(run.res.Files, &migrate.File{Path: path, Original: orig, Migrated: out})
		if abs, err := filepath.Abs(path); err == nil && len(moved) > 0 {
			overlay[abs] = out
		}
	}
	for p, b := range kf.overlay {
		if _, ok := overlay[p]; !ok {
			overlay[p] = b
		}
	}
	moved := *kf
	moved.overlay = overlay
	after, diags, err := moved.build()
	if err != nil {
		return nil, err
	}
	if after == nil || diags.HasErrors() {
		return nil, &migrate.ProblemsError{What: "the moved katalog does not check (this is a bug in migrate --layout; please report it); nothing was written", Diags: diags.Errors()}
	}
	objs, err := layoutSamples(before, samples, count, seed)
	if err != nil {
		return nil, err
	}
	if err := sameMeaning(before, after, objs); err != nil {
		return nil, fmt.Errorf("the moved katalog does not mean what the original does (this is a bug in migrate --layout; please report it); nothing was written: %w", err)
	}
	run.objects = len(objs)
	return run, nil
}

// read reads a katalog file, from the overlay when it holds it.
func (f *katalogFlags) read(path string) ([]byte, error) {
	if abs, err := filepath.Abs(path); err == nil {
		if b, ok := f.overlay[abs]; ok {
			return b, nil
		}
	}
	return os.ReadFile(path)
}

// layoutSamples are the objects the two katalogs are compared on.
func layoutSamples(plan *engine.Plan, samples []string, count int, seed int64) ([]*unstructured.Unstructured, error) {
	var files []string
	for _, e := range plan.Katalog.CRDs {
		files = append(files, e.CRFiles...)
	}
	var objs []*unstructured.Unstructured
	if files = append(files, samples...); len(files) > 0 {
		var err error
		if objs, err = readObjects(files, nil); err != nil {
			return nil, err
		}
	}
	for _, e := range plan.Entries {
		if e.Schema == nil || count <= 0 {
			continue
		}
		gen, err := objgen.TryGenerate(e.Schema, e.GVK, count, objgen.Options{Seed: seed, ClusterScoped: !e.Namespaced})
		if err != nil {
			return nil, fmt.Errorf("generating %s objects to compare on: %w", e.GVK.Kind, err)
		}
		for _, o := range gen {
			objs = append(objs, &unstructured.Unstructured{Object: o})
		}
	}
	return objs, nil
}

// positions are file:line:col, which a move shifts.
var positions = regexp.MustCompile(`[^\s"()]*:\d+:\d+`)

// normalized takes out of a message what a move changes: positions, and
// the newest spelling of the paths (read as the flat one).
func normalized(s string) string {
	s = positions.ReplaceAllString(s, "")
	for _, m := range katalog.LayoutMoves {
		s = strings.ReplaceAll(s, m.Newest, m.Flat)
	}
	return s
}

// sameMeaning compares what the two plans do.
func sameMeaning(a, b *engine.Plan, objs []*unstructured.Unstructured) error {
	ca, cb := conversion.New(a, conversion.Options{}), conversion.New(b, conversion.Options{})
	for _, o := range objs {
		ra, ea := renderOne(a, ca, o.DeepCopy(), "default", nil)
		ra2, ea2 := renderOne(a, ca, o.DeepCopy(), "default", nil)
		rb, eb := renderOne(b, cb, o.DeepCopy(), "default", nil)
		ja, jb := maskRandom(layoutJSON(ra, ea), layoutJSON(ra2, ea2), layoutJSON(rb, eb))
		if ja != jb {
			return fmt.Errorf("%s %s renders differently:\n  original: %s\n  moved:    %s", o.GetKind(), o.GetName(), ja, jb)
		}
	}
	var wa, wb strings.Builder
	if err := writeAdmission(&wa, a); err != nil {
		return err
	}
	if err := writeAdmission(&wb, b); err != nil {
		return err
	}
	if normalized(wa.String()) != normalized(wb.String()) {
		return errors.New("the admission rules differ (orkestra render --admission)")
	}
	for i, e := range a.Entries {
		na, nb := namespaceRules(e.Source), namespaceRules(b.Entries[i].Source)
		if na != nb {
			return fmt.Errorf("entry %s: namespace rules differ: %s, moved %s", e.Name, na, nb)
		}
	}
	return nil
}

// maskRandom compares random values by shape: a leaf on which two renders
// of the original differ (randomHex, uuid, …) becomes its type and length
// in the original's render and in the moved one's.
func maskRandom(a, a2, b string) (string, string) {
	if a == a2 {
		return a, b
	}
	var va, va2, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(a2), &va2) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return a, b
	}
	va, vb = mask(va, va2, vb)
	ma, _ := json.Marshal(va)
	mb, _ := json.Marshal(vb)
	return string(ma), string(mb)
}

func mask(a, a2, b any) (any, any) {
	switch x := a.(type) {
	case map[string]any:
		x2, ok2 := a2.(map[string]any)
		y, ok := b.(map[string]any)
		if !ok || !ok2 {
			return a, b
		}
		for k := range x {
			if _, in := y[k]; in {
				x[k], y[k] = mask(x[k], x2[k], y[k])
			}
		}
		return x, y
	case []any:
		x2, ok2 := a2.([]any)
		y, ok := b.([]any)
		if !ok || !ok2 || len(x2) != len(x) || len(y) != len(x) {
			return a, b
		}
		for i := range x {
			x[i], y[i] = mask(x[i], x2[i], y[i])
		}
		return x, y
	}
	if fmt.Sprint(a) == fmt.Sprint(a2) {
		return a, b
	}
	shape := func(v any) string { return fmt.Sprintf("random %T of length %d", v, len(fmt.Sprint(v))) }
	return shape(a), shape(b)
}

func layoutJSON(r *renderedCR, err error) string {
	var s string
	if err != nil {
		s = "error: " + err.Error()
	} else {
		b, jerr := json.Marshal(r)
		if jerr != nil {
			return "error: " + jerr.Error()
		}
		s = string(b)
	}
	return normalized(s)
}

func namespaceRules(e *katalog.CRDEntry) string {
	if e.Namespaces == nil {
		return "none"
	}
	r := e.Namespaces
	return fmt.Sprintf("allowed %q restricted %q watch %q", r.Allowed, r.Restricted, r.Watch)
}

// writeLayoutReport lists the keys moved.
func (r *layoutRun) writeReport(w io.Writer, layout string) {
	for _, m := range r.moved {
		fmt.Fprintf(w, "%s:%d: entry %s: %s → %s\n", m.File, m.Line, m.Entry, m.From, m.To)
	}
	fmt.Fprintf(w, "moved %d keys into the %s layout; the moved katalog checks and renders alike on %d objects\n", len(r.moved), layout, r.objects)
}

// migrateLayout is migrate --layout.
func migrateLayout(cmd *cobra.Command, kf *katalogFlags, layout string, samples []string, count int, seed int64, out string, inPlace bool) error {
	stderr := cmd.ErrOrStderr()
	run, err := relayout(kf, layout, samples, count, seed)
	var pe *migrate.ProblemsError
	if errors.As(err, &pe) {
		fmt.Fprintln(stderr, pe.What+":")
		printDiagnostics(stderr, pe.Diags)
		return exitCode(1)
	}
	if err != nil {
		return err
	}
	run.writeReport(stderr, layout)
	return writeMigrated(cmd.OutOrStdout(), stderr, run.res, out, inPlace)
}
