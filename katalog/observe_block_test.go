package katalog

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// observe.watch is operatorBox.watch under upstream v0.7.18's name
// (orkspace/orkestra pkg/types/types_observe.go, documentation/reference/
// schema/02-katalog/27-watch.md): both decode into the same Observation.
func TestObserveWatchIsWatch(t *testing.T) {
	watch := `
  - apiVersion: v1
    kind: ConfigMap
    name: shared
    namespace: platform
    on: [delete]
    keyFrom: {name: one, namespace: ns}
    enqueueGate:
      sentinels: [labelsChanged]
      failPolicy: closed`
	old, _, diags := loadBox(t, "watch:"+watch)
	wantDiags(t, diags)
	indented := strings.ReplaceAll(watch, "\n", "\n  ")
	newer, _, diags := loadBox(t, "observe:\n  watch:"+indented)
	wantDiags(t, diags)
	a, b := *old.CRDs[0].Box.Observations[0], *newer.CRDs[0].Box.Observations[0]
	if a.Field != "operatorBox.watch[0]" || b.Field != "operatorBox.observe.watch[0]" {
		t.Errorf("fields %s, %s", a.Field, b.Field)
	}
	// Positions and field paths differ; what the watch does must not.
	for _, o := range []*Observation{&a, &b} {
		o.Pos, o.Field, o.TargetPos, o.Name, o.Namespace = Pos{}, "", Pos{}, nil, nil
		o.KeyFrom.Pos, o.Gate.Pos = Pos{}, Pos{}
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("operatorBox.watch %+v\nobserve.watch     %+v", a, b)
	}
	if !reflect.DeepEqual(b.On, []string{EventDelete}) || b.Gate.Fail != FailClosed || !reflect.DeepEqual(b.Gate.Sentinels, []string{"labelsChanged"}) {
		t.Errorf("watch %+v gate %+v", b, b.Gate)
	}
}

func TestObserveBothSpellings(t *testing.T) {
	_, _, diags := loadBox(t, `
watch:
  - {apiVersion: v1, kind: ConfigMap}
observe:
  watch:
    - {apiVersion: v1, kind: Secret}
  cross:
    - {crd: site, as: me}
cross:
  - {crd: site, as: other}
`)
	wantDiags(t, diags,
		`20:11: [site] operatorBox.observe.cross: cross is written both here and at KATALOG:22:9 (operatorBox.cross); keep one`,
		`18:11: [site] operatorBox.observe.watch: watch is written both here and at KATALOG:15:9 (operatorBox.watch, the flat layout); keep one (operatorBox.observe.watch is the newer layout)`)
}

// observe.events (documentation/reference/schema/02-katalog/28-events.md):
// a map of camelCase names to the Event fields to match.
func TestObserveEvents(t *testing.T) {
	k, _, diags := loadBox(t, `
observe:
  events:
    dbReady:
      reason: DatabaseReady
      type: Normal
      action: Provisioned
      reportingController: db.example.com/operator
      reportingInstance: db-0
      namespace: data
      name: ev-1
      regarding: {apiVersion: example.com/v1, kind: Database, name: main, namespace: data}
      related: {kind: Pod}
      on: [create]
      keyFrom: {label: example.com/site}
      enqueueGate:
        when: "self.reason != ''"
`)
	wantDiags(t, diags)
	ob := k.CRDs[0].Box.Observations[0]
	want := &EventMatch{Name: "dbReady", Reason: "DatabaseReady", Type: "Normal", Action: "Provisioned", ReportingController: "db.example.com/operator", ReportingInstance: "db-0",
		Regarding: &ObjectMatch{APIVersion: "example.com/v1", Kind: "Database", Name: "main", Namespace: "data"}, Related: &ObjectMatch{Kind: "Pod"}}
	if !reflect.DeepEqual(ob.Event, want) {
		t.Errorf("event %+v", ob.Event)
	}
	if ob.APIVersion != EventsAPIVersion || ob.Kind != EventKind || ob.Namespace.Str != "data" || ob.Name.Str != "ev-1" || ob.KeyFrom.Label != "example.com/site" || ob.Gate.When.Empty() || !reflect.DeepEqual(ob.On, []string{EventCreate}) {
		t.Errorf("observation %+v", ob)
	}
	if ob.GVK.String() != "events.k8s.io/v1, Kind=Event" || !ob.Resolved {
		t.Errorf("resolved %v %v", ob.GVK, ob.Resolved)
	}
}

func TestObserveEventErrors(t *testing.T) {
	_, _, diags := loadBox(t, `
observe:
  events:
    DbReady: {reason: A}
    empty: {on: [create]}
    bad:
      reason: A
      regarding: {kind: Pod, uid: x}
      on: [created]
`)
	wantDiags(t, diags,
		`17:13: [site] operatorBox.observe.events.DbReady: event declaration names are camelCase (letters and digits, starting with a lower-case letter), got "DbReady"`,
		`21:38: [site] operatorBox.observe.events.bad.regarding.uid: unknown key "uid"; allowed keys: apiVersion, kind, name, namespace`,
		`22:20: [site] operatorBox.observe.events.bad.on[0]: event "created" is not create, update or delete; did you mean "create"?`,
		`22:19: [site] operatorBox.observe.events.bad.on: on: lists no event, so the watch would never reconcile; list create, update and/or delete, or remove on: for all three`,
		`18:13: [site] operatorBox.observe.events.empty: an event declaration needs at least one field to match (reason, type, regarding, …) or keyFrom; an empty one would reconcile on every Event of the cluster`)
}

// observe.include reads watch: and events: from a file; an inline event
// replaces an included one of the same name (types_observe.go, Include).
func TestObserveInclude(t *testing.T) {
	inc := "watch:\n  - {apiVersion: v1, kind: Secret}\nevents:\n  dbReady: {reason: FromFile}\n  dbGone: {reason: Gone}\n"
	p := writeKatalog(t, header+entry+"      operatorBox:\n        observe:\n          include: observe.yaml\n          watch:\n            - {apiVersion: v1, kind: ConfigMap}\n          events:\n            dbReady: {reason: Inline}\n")
	if err := os.WriteFile(filepath.Join(filepath.Dir(p), "observe.yaml"), []byte(inc), 0o600); err != nil {
		t.Fatal(err)
	}
	k, diags := Load(p)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var got []string
	for _, o := range k.CRDs[0].Box.Observations {
		s := o.Kind + " " + o.Field
		if o.Event != nil {
			s += " " + o.Event.Reason
		}
		got = append(got, s)
	}
	want := []string{"Secret operatorBox.observe.include: watch[0]", "ConfigMap operatorBox.observe.watch[0]", "Event operatorBox.observe.events.dbGone Gone", "Event operatorBox.observe.events.dbReady Inline"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("observations %q\nwant %q", got, want)
	}
	if len(k.Included) != 1 || filepath.Base(k.Included[0]) != "observe.yaml" {
		t.Errorf("included %v", k.Included)
	}
}

// Two watches of the same objects are rejected, as upstream's validation
// does (27-watch.md); a different name or namespace is another watch.
func TestObserveDuplicateWatch(t *testing.T) {
	_, _, diags := loadBox(t, `
observe:
  watch:
    - {apiVersion: v1, kind: ConfigMap, name: a, on: [create]}
    - {apiVersion: v1, kind: ConfigMap, name: b}
    - {apiVersion: v1, kind: ConfigMap, name: a, on: [delete]}
`)
	wantDiags(t, diags, `19:15: [site] operatorBox.observe.watch[2]: watches the same objects as operatorBox.observe.watch[0] (KATALOG:17:15): merge the two (list both events under on:)`)
}
