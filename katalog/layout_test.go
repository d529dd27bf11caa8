package katalog

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// conversionBlock is a website conversion at the given indentation.
func conversionBlock(indent string) string {
	var b strings.Builder
	for _, l := range []string{
		"conversion:",
		"  storageVersion: v1",
		"  paths:",
		"    - from: v1alpha1",
		"      to: v1",
		"      spec:",
		"        theme: \"${self.spec.theme}\"",
		"    - from: v1",
		"      to: v1alpha1",
		"      spec: {}",
	} {
		b.WriteString(indent + l + "\n")
	}
	return b.String()
}

// Upstream v0.7.18 moved conversion paths under the entry's admission:
// block (orkspace/orkestra CHANGELOG v0.7.18); the flat key keeps loading.
// Both spellings decode into the same Conversion, through one decoder.
func TestAdmissionConversionIsTheFlatKeyNested(t *testing.T) {
	flat, fd := Load(writeKatalog(t, header+entry+conversionBlock("      ")))
	nested, nd := Load(writeKatalog(t, header+entry+"      admission:\n"+conversionBlock("        ")))
	if fd.HasErrors() || nd.HasErrors() {
		t.Fatalf("flat: %v\nnested: %v", fd, nd)
	}
	f, n := flat.CRDs[0].Conversion, nested.CRDs[0].Conversion
	if f == nil || n == nil {
		t.Fatalf("conversion not decoded: flat %v, nested %v", f, n)
	}
	if f.Path != "conversion" || n.Path != "admission.conversion" {
		t.Errorf("paths: flat %q, nested %q", f.Path, n.Path)
	}
	if len(n.Paths) != 2 || n.StorageVersion != "v1" {
		t.Fatalf("nested: %d paths, storage %q", len(n.Paths), n.StorageVersion)
	}
	for i := range f.Paths {
		a, b := f.Paths[i], n.Paths[i]
		if a.From != b.From || a.To != b.To || !reflect.DeepEqual(plainOf(a.Spec), plainOf(b.Spec)) {
			t.Errorf("path %d: flat %s→%s %v, nested %s→%s %v", i, a.From, a.To, plainOf(a.Spec), b.From, b.To, plainOf(b.Spec))
		}
	}
	// An admission: block that holds only conversion declares no rules.
	if nested.CRDs[0].Admission != nil {
		t.Errorf("admission rules from a conversion-only admission block: %+v", nested.CRDs[0].Admission)
	}
}

func TestAdmissionLayoutErrors(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"conversion in both places", header + entry + conversionBlock("      ") + "      admission:\n" + conversionBlock("        "),
			`25:9: [site] admission.conversion: conversion is written both here and at KATALOG:14:7 (conversion, the flat layout); keep one (admission.conversion is the newer layout)`},
		{"validation in both places", header + entry + "      validation:\n        rules: []\n      admission:\n        validation:\n          rules: []\n",
			`17:9: [site] admission.validation: validation is written both here and at KATALOG:14:7 (validation, the flat layout); keep one (admission.validation is the newer layout)`},
		{"decode errors name the nested path", header + entry + "      admission:\n        conversion:\n          paths:\n            - from: v1\n",
			`17:15: [site] admission.conversion.paths[0]: a conversion path needs both from: and to: versions`},
		{"unserved version under admission", header + entry + "      admission:\n        conversion:\n          paths:\n            - from: v1\n              to: v9\n",
			`18:19: [site] admission.conversion.paths[0].to: version "v9" is not served`},
		{"admission.webhooks is the entry's webhooks", header + entry + "      admission:\n        webhooks: {validation: false}\n",
			`15:9: [site] admission.webhooks: "webhooks" is part of the original katalog format but not supported by this runtime: upstream's admission webhook switches`},
		{"unknown admission key", header + entry + "      admission:\n        conversions: {}\n",
			`15:9: [site] admission.conversions: unknown key "conversions"; did you mean "conversion"?`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeKatalog(t, tc.body)
			_, diags := Load(p)
			errs := diags.Errors()
			if len(errs) == 0 {
				t.Fatalf("no error; want %q", tc.want)
			}
			got := strings.ReplaceAll(errs[0].Error(), p, "KATALOG")
			if !strings.HasPrefix(got, "KATALOG:"+tc.want) {
				t.Fatalf("got  %s\nwant KATALOG:%s", got, tc.want)
			}
		})
	}
}

// Flat validation and nested conversion (a katalog half-way to the newest
// layout) load together: each key is written once.
func TestMixedLayoutLoads(t *testing.T) {
	k, diags := Load(writeKatalog(t, header+entry+"      validation:\n        rules:\n          - {rule: \"has(self.spec)\", message: m}\n      admission:\n"+conversionBlock("        ")))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e := k.CRDs[0]
	if e.Admission == nil || len(e.Admission.Validation) != 1 || e.Conversion == nil || len(e.Conversion.Paths) != 2 {
		t.Fatalf("admission %+v conversion %+v", e.Admission, e.Conversion)
	}
}

// operatorBox.runtime (v0.7.18) holds keys that existed under other
// names: each decodes as its older spelling.
func TestRuntimeKeysAreTheirOlderSpellings(t *testing.T) {
	k, _, diags := loadBox(t, `
runtime:
  finalizers: [example.com/a]
  allowedNamespaces: [team-*]
  cleanup:
    or:
      - field: status.phase
        equals: Failed
      - "self.status.?phase.orValue('') == 'Succeeded'"
    deleteAfter: 10m
`)
	wantDiags(t, diags)
	e := k.CRDs[0]
	if got := e.Box.Finalizers; len(got) != 1 || got[0] != "example.com/a" {
		t.Errorf("finalizers %v", got)
	}
	if e.Namespaces == nil || len(e.Namespaces.Allowed) != 1 || !e.Namespaces.Permits("team-a") || e.Namespaces.Permits("other") {
		t.Errorf("allowedNamespaces %+v", e.Namespaces)
	}
	c := e.Box.Cleanup
	if c == nil || c.DeleteAfter != 10*time.Minute || c.When != nil || c.Or == nil || len(c.Or.Conditions) != 1 || len(c.Or.Exprs) != 1 {
		t.Fatalf("cleanup %+v", c)
	}
}

func TestRuntimeErrors(t *testing.T) {
	// The keys upstream moved under runtime that this runtime does not
	// implement are refused with the message of their older spelling.
	_, _, diags := loadBox(t, `
runtime:
  autoscale: {}
  deletionProtection: {protectCRs: true}
  rollback: {}
`)
	_, autoscale := upstreamMessage("autoscale")
	_, protection := upstreamMessage("deletionProtection")
	_, rollback := upstreamMessage("rollback")
	wantDiags(t, diags,
		`16:11: [site] operatorBox.runtime.autoscale: "autoscale" `+autoscale,
		`17:11: [site] operatorBox.runtime.deletionProtection: "deletionProtection" `+protection,
		`18:11: [site] operatorBox.runtime.rollback: "rollback" `+rollback)

	cases := []struct{ name, box, entryLines, want string }{
		{"finalizers twice", "finalizers: [a]\nruntime:\n  finalizers: [b]\n", "",
			`17:11: [site] operatorBox.runtime.finalizers: finalizers is written both here and at KATALOG:15:9 (operatorBox.finalizers, the flat layout); keep one (operatorBox.runtime.finalizers is the newer layout)`},
		{"allowedNamespaces twice", "runtime:\n  allowedNamespaces: [b]\n", "      allowedNamespaces: [a]\n",
			`17:11: [site] operatorBox.runtime.allowedNamespaces: allowedNamespaces is written both here and at KATALOG:14:7 (allowedNamespaces, the flat layout); keep one (operatorBox.runtime.allowedNamespaces is the newer layout)`},
		{"status twice", "status:\n  fields: []\nemit:\n  status:\n    fields: []\n", "",
			`18:11: [site] operatorBox.emit.status: status is written both here and at KATALOG:15:9 (operatorBox.status, the flat layout); keep one (operatorBox.emit.status is the newer layout)`},
		{"cleanup without a condition", "runtime:\n  cleanup:\n    deleteAfter: 1h\n", "",
			`17:13: [site] operatorBox.runtime.cleanup: cleanup deletes the custom resource once its condition holds: give it when: or or:`},
		{"bad deleteAfter", "runtime:\n  cleanup:\n    when: [\"true\"]\n    deleteAfter: soon\n", "",
			`18:26: [site] operatorBox.runtime.cleanup.deleteAfter: "soon" is not a duration`},
		{"deleteAfter never", "runtime:\n  cleanup:\n    when: [\"true\"]\n    deleteAfter: never\n", "",
			`18:26: [site] operatorBox.runtime.cleanup.deleteAfter: deleteAfter: never would keep every custom resource; remove cleanup instead`},
		{"bad namespace pattern", "runtime:\n  allowedNamespaces: [\"a*b\"]\n", "",
			`16:31: [site] operatorBox.runtime.allowedNamespaces[0]: "a*b" is not a namespace pattern`},
		{"unknown runtime key", "runtime:\n  cleanUp: {}\n", "",
			`16:11: [site] operatorBox.runtime.cleanUp: unknown key "cleanUp"; did you mean "cleanup"?`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString(header + entry + tc.entryLines + "      operatorBox:\n")
			for _, line := range strings.Split(strings.Trim(tc.box, "\n"), "\n") {
				b.WriteString("        " + line + "\n")
			}
			p := writeKatalog(t, b.String())
			_, diags := Load(p)
			errs := diags.Errors()
			if len(errs) == 0 {
				t.Fatalf("no error; want %q", tc.want)
			}
			got := strings.ReplaceAll(errs[0].Error(), p, "KATALOG")
			if !strings.HasPrefix(got, "KATALOG:"+tc.want) {
				t.Fatalf("got  %s\nwant KATALOG:%s", got, tc.want)
			}
		})
	}
}

func TestEmitEventsDecode(t *testing.T) {
	k, _, diags := loadBox(t, `
emit:
  events:
    done:
      reason: BackupCompleted
      message: "${self.metadata.name} backed up"
      type: Warning
      on: [success, failure]
      when: ["self.spec.replicas > 0"]
    plain:
      reason: Plain
      message: text
`)
	wantDiags(t, diags)
	evs := k.CRDs[0].Box.Events
	if len(evs) != 2 || evs[0].Name != "done" || evs[1].Name != "plain" {
		t.Fatalf("events %+v", evs)
	}
	d, p := evs[0], evs[1]
	if d.Reason != "BackupCompleted" || d.Type != "Warning" || !d.OnSuccess || !d.OnFailure || d.When == nil || d.Message.Str != "${self.metadata.name} backed up" {
		t.Errorf("done %+v", d)
	}
	if p.Type != "Normal" || !p.OnSuccess || p.OnFailure || p.When != nil {
		t.Errorf("defaults: %+v", p)
	}
}

func TestEmitEventsErrors(t *testing.T) {
	cases := []struct{ name, box, want string }{
		{"no reason", "emit:\n  events:\n    e:\n      message: m\n", `17:13: [site] operatorBox.emit.events.e: an event needs reason:`},
		{"templated reason", "emit:\n  events:\n    e:\n      reason: \"{{ .spec.x }}\"\n      message: m\n", `18:23: [site] operatorBox.emit.events.e.reason: reason "{{ .spec.x }}" is not a CamelCase word`},
		{"no message", "emit:\n  events:\n    e:\n      reason: R\n", `17:13: [site] operatorBox.emit.events.e: an event needs message:`},
		{"bad type", "emit:\n  events:\n    e:\n      reason: R\n      message: m\n      type: Error\n", `20:21: [site] operatorBox.emit.events.e.type: type must be Normal or Warning, got "Error"`},
		{"bad on", "emit:\n  events:\n    e:\n      reason: R\n      message: m\n      on: [sucess]\n", `20:20: [site] operatorBox.emit.events.e.on[0]: on takes success, failure or always, got "sucess"; did you mean "success"?`},
		{"unknown key", "emit:\n  events:\n    e:\n      reason: R\n      message: m\n      note: n\n", `20:15: [site] operatorBox.emit.events.e.note: unknown key "note"`},
		{"not a map", "emit:\n  events: [a]\n", `16:19: [site] operatorBox.emit.events: events is a map of name`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, diags := loadBox(t, tc.box)
			if len(diags) == 0 || !strings.HasPrefix(diags[0], tc.want) {
				t.Fatalf("got %q\nwant %s", diags, tc.want)
			}
		})
	}
}

// An entry's lifecycle feeds the deprecation the entry's deprecated: and
// deprecationWarning: declare (upstream v0.7.16's lifecycle block).
func TestLifecycleDeprecates(t *testing.T) {
	k, diags := Load(writeKatalog(t, header+entry+"      lifecycle:\n        maturity: deprecated\n        deprecation:\n          message: use v2 instead\n          migratedTo: site-v2\n        compatibility:\n          kubernetes: \">= 1.28\"\n"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e := k.CRDs[0]
	if !e.Deprecated || e.DeprecationWarning == nil || *e.DeprecationWarning != "use v2 instead" {
		t.Fatalf("deprecated %v warning %v", e.Deprecated, e.DeprecationWarning)
	}
	if dep, w := k.Deprecation(e.CRD, "v1"); !dep || *w != "use v2 instead" {
		t.Errorf("the CRD's v1 is not marked: %v %v", dep, w)
	}
	var warns []string
	for _, d := range diags {
		warns = append(warns, d.Field)
	}
	if strings.Join(warns, ",") != "lifecycle.compatibility,lifecycle.deprecation.migratedTo" {
		t.Errorf("warnings on %v", warns)
	}
	k, diags = Load(writeKatalog(t, header+entry+"      lifecycle:\n        maturity: stable\n"))
	if diags.HasErrors() || k.CRDs[0].Deprecated {
		t.Errorf("a stable entry: %v, deprecated %v", diags, k.CRDs[0].Deprecated)
	}
}

// Keys of the newest layout this runtime does not implement are load
// errors naming the key and what to write instead.
func TestNewestLayoutRefusals(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"lifecycle and deprecated", header + entry + "      deprecated: true\n      lifecycle:\n        maturity: deprecated\n",
			`15:7: [site] lifecycle: deprecation is already declared by deprecated: at KATALOG:14:7; keep one`},
		{"bad maturity", header + entry + "      lifecycle:\n        maturity: retired\n",
			`15:19: [site] lifecycle.maturity: maturity must be one of [alpha beta stable deprecated], got "retired"`},
		{"stable yet deprecated", header + entry + "      lifecycle:\n        maturity: stable\n        deprecation: {message: m}\n",
			`16:9: [site] lifecycle.deprecation: a deprecation with maturity: stable`},
		{"bad failPolicy", header + entry + "      operatorBox:\n        preReconcile:\n          reconcileGate:\n            failPolicy: shut\n",
			`17:25: [site] operatorBox.preReconcile.reconcileGate.failPolicy: failPolicy must be open`},
		{"gate sentinels", header + entry + "      operatorBox:\n        preReconcile:\n          enqueueGate:\n            sentinels: [generationChanged]\n",
			`17:25: [site] operatorBox.preReconcile.enqueueGate.sentinels: sentinel generationChanged is not declared under preReconcile.sentinels, so it is never computed; add it there (sentinels: [generationChanged])`},
		{"eventAware", header + entry + "      operatorBox:\n        preReconcile:\n          reconcileGate:\n            eventAware: true\n",
			`17:13: [site] operatorBox.preReconcile.reconcileGate.eventAware: "eventAware" is part of the original katalog format but not supported by this runtime: this runtime coalesces`},
		{"reconcile.remote", header + entry + "      operatorBox:\n        reconcile:\n          remote: {url: \"http://x\"}\n",
			`16:11: [site] operatorBox.reconcile.remote: "remote" is part of the original katalog format but not supported by this runtime: an HTTP reconciler`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeKatalog(t, tc.body)
			_, diags := Load(p)
			errs := diags.Errors()
			if len(errs) == 0 {
				t.Fatalf("no error; want %q", tc.want)
			}
			got := strings.ReplaceAll(errs[0].Error(), p, "KATALOG")
			if !strings.HasPrefix(got, "KATALOG:"+tc.want) {
				t.Fatalf("got  %s\nwant KATALOG:%s", got, tc.want)
			}
		})
	}
}
