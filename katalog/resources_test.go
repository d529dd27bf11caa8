package katalog

import (
	"slices"
	"strings"
	"testing"
)

// loadBox loads a one-entry katalog whose operatorBox is box (indented from
// column 0) and returns the katalog and every diagnostic as text.
func loadBox(t *testing.T, box string) (*Katalog, string, []string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(header + entry + "      operatorBox:\n")
	for _, line := range strings.Split(strings.Trim(box, "\n"), "\n") {
		b.WriteString("        " + line + "\n")
	}
	p := writeKatalog(t, b.String())
	k, diags := Load(p)
	var out []string
	for _, d := range diags {
		out = append(out, strings.TrimPrefix(strings.ReplaceAll(d.Error(), p, "KATALOG"), "KATALOG:"))
	}
	return k, p, out
}

func wantDiags(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// One status path declared several times, each under its own when: the last
// declaration that holds wins (upstream: pkg/resources/template/
// resolver_status.go writes the fields in order into one map).
func TestStatusPathDeclaredUnderSeveralWhens(t *testing.T) {
	k, _, diags := loadBox(t, `
status:
  fields:
    - path: phase
      value: Pending
    - path: phase
      value: Running
      when: "self.spec.replicas > 0"
    - path: phase
      value: Scaled
      when: "self.spec.replicas > 3"
      clearOnFalse: true
`)
	wantDiags(t, diags)
	fields := k.CRDs[0].Box.Status.Fields
	if len(fields) != 3 || fields[2].Path != "phase" || !fields[2].ClearOnFalse || fields[1].ClearOnFalse {
		t.Fatalf("fields = %+v", fields)
	}
}

func TestStatusDeclarationThatNeverShowsWarns(t *testing.T) {
	_, _, diags := loadBox(t, `
status:
  fields:
    - path: phase
      value: a
      when: "self.spec.replicas > 0"
    - path: phase
      value: b
`)
	wantDiags(t, diags,
		"17:15: warning: [site] operatorBox.status.fields[0]: status.phase is set again unconditionally at KATALOG:20:15, so this declaration never shows; remove it, or give the later one a when:")
}

func TestClearOnFalseNeedsWhen(t *testing.T) {
	_, _, diags := loadBox(t, `
status:
  fields:
    - path: phase
      value: a
      clearOnFalse: true
`)
	wantDiags(t, diags, "19:15: [site] operatorBox.status.fields[0].clearOnFalse: clearOnFalse clears the field while its when: does not hold; add a when:")
}

// A custom child written the upstream way: identity under metadata (labels
// as a key/value list), control keys hasStatus and metadata.namespaced that
// are not part of the object (upstream: pkg/types/custom_resource.go,
// examples/advanced/16-custom-resources).
func TestCustomChildUpstreamForm(t *testing.T) {
	k, _, diags := loadBox(t, `
onCreate:
  custom:
    - apiVersion: example.io/v1
      kind: Cache
      metadata:
        name: "{{ .metadata.name }}-cache"
        namespace: "{{ .metadata.namespace }}"
        namespaced: true
        labels:
          - key: tier
            value: "{{ .spec.tier }}"
        annotations: {team: data}
      spec: {size: 3}
      status: {phase: Pending}
      hasStatus: false
`)
	wantDiags(t, diags)
	r := k.CRDs[0].Box.Hooks[OnCreate].Resources[0]
	var keys []string
	for _, e := range r.Fields.Map {
		keys = append(keys, e.Key)
	}
	if strings.Join(keys, ",") != "apiVersion,kind,name,namespace,metadata,spec,status" {
		t.Errorf("fields = %v", keys)
	}
	if r.Fields.Get("name").Str != "{{ .metadata.name }}-cache" || r.Fields.Get("namespace").Str != "{{ .metadata.namespace }}" {
		t.Errorf("identity not lifted: %+v", r.Fields.Get("name"))
	}
	md := r.Fields.Get("metadata")
	if len(md.Map) != 2 || md.Get("labels").Kind != MapValue || md.Get("labels").Get("tier").Str != "{{ .spec.tier }}" || md.Get("annotations").Get("team").Str != "data" {
		t.Errorf("metadata = %+v", md.Plain())
	}
	if r.Namespaced == nil || !*r.Namespaced || r.HasStatus == nil || *r.HasStatus || r.WritesStatus() {
		t.Errorf("control keys: namespaced %v hasStatus %v", r.Namespaced, r.HasStatus)
	}
}

func TestCustomChildErrors(t *testing.T) {
	_, _, diags := loadBox(t, `
onCreate:
  custom:
    - apiVersion: example.io/v1
      kind: Cache
      name: a
      metadata:
        name: b
        uid: x
      sleep: 5s
`)
	wantDiags(t, diags,
		`22:17: [site] operatorBox.onCreate.custom[0].metadata.uid: unknown key "uid"; allowed keys: annotations, labels, name, namespace, namespaced`,
		`21:17: [site] operatorBox.onCreate.custom[0].metadata.name: the name is given twice: here and at KATALOG:19:15; keep one`,
		`23:15: [site] operatorBox.onCreate.custom[0].sleep: "sleep" is part of the original katalog format but not supported by this runtime: sleep delays a resource's reconcile for chaos testing, which this runtime does not do; remove it`)
}

// loadEntry loads a one-entry katalog with extra entry-level lines.
func loadEntry(t *testing.T, lines string) (*Katalog, []string) {
	t.Helper()
	p := writeKatalog(t, header+entry+strings.TrimLeft(lines, "\n"))
	k, diags := Load(p)
	var out []string
	for _, d := range diags {
		out = append(out, strings.TrimPrefix(strings.ReplaceAll(d.Error(), p, "KATALOG"), "KATALOG:"))
	}
	return k, out
}

// Upstream: pkg/types/ns_allowed.go, ns_restricted.go,
// pkg/runtime/reconciler/run_namespace_guard.go.
func TestNamespaceRules(t *testing.T) {
	k, diags := loadEntry(t, `
      allowedNamespaces: [apps, team-*, "*-sandbox"]
      restrictedNamespaces: [team-secret]
`)
	wantDiags(t, diags)
	r := k.CRDs[0].Namespaces
	for ns, want := range map[string]bool{
		"apps": true, "team-a": true, "x-sandbox": true, "": true,
		"team-secret": false, "default": false, "apps2": false,
	} {
		if r.Permits(ns) != want {
			t.Errorf("Permits(%q) = %v", ns, !want)
		}
	}
	if r.WatchNamespaces() != nil || r.ChildNamespaces() != nil {
		t.Errorf("patterns cannot be listed: %v %v", r.WatchNamespaces(), r.ChildNamespaces())
	}
	k, diags = loadEntry(t, `
      allowedNamespaces: [apps, web, tmp]
      restrictedNamespaces: [tmp]
`)
	wantDiags(t, diags)
	if got := k.CRDs[0].Namespaces.WatchNamespaces(); strings.Join(got, ",") != "apps,web" {
		t.Errorf("WatchNamespaces = %v", got)
	}
	k, diags = loadEntry(t, `
      namespace: shop
`)
	wantDiags(t, diags)
	r = k.CRDs[0].Namespaces
	if !r.Reconciles("shop") || r.Reconciles("other") || !r.Permits("other") || strings.Join(r.WatchNamespaces(), ",") != "shop" || r.ChildNamespaces() != nil {
		t.Errorf("namespace: shop → %+v", r)
	}
	var none *NamespaceRules
	if !none.Permits("x") || !none.Reconciles("x") || none.WatchNamespaces() != nil {
		t.Error("no rules restrict nothing")
	}
}

func TestNamespaceRuleErrors(t *testing.T) {
	_, diags := loadEntry(t, `
      allowedNamespaces: ["te*am", "*", Apps]
      namespace: "not a namespace"
      labels: {team: a}
      critical: true
`)
	wantDiags(t, diags,
		`14:27: [site] allowedNamespaces[0]: "te*am" is not a namespace pattern: use an exact name, prefix* or *suffix`,
		`14:36: [site] allowedNamespaces[1]: "*" matches every namespace; remove the list instead`,
		`14:41: [site] allowedNamespaces[2]: "Apps" is not a namespace name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
		`15:18: [site] namespace: namespace "not a namespace" is not a namespace name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
		`16:7: warning: [site] labels: labels: the original runtime reads and ignores this key (labels for the custom resources was removed from it), and so does this runtime; remove it`,
		`17:7: warning: [site] critical: critical: the original runtime reads and ignores this key (marking the whole controller degraded with this entry was removed from it), and so does this runtime; remove it`)
}

// Copies: fromNamespace needs a source; toNamespaces replaces namespace.
// Upstream: documentation/reference/schema/06-resources/secrets.md.
func TestCopyFieldErrors(t *testing.T) {
	_, _, diags := loadBox(t, `
onCreate:
  secrets:
    - fromNamespace: platform
      data: {a: b}
  configMaps:
    - fromConfigMap: shared
      namespace: apps
      toNamespaces: [a, b]
`)
	wantDiags(t, diags,
		`17:15: [site] operatorBox.onCreate.secrets[0].fromNamespace: fromNamespace says where fromSecret lives, but there is no fromSecret; add it or remove fromNamespace`,
		`22:15: [site] operatorBox.onCreate.configMaps[0].toNamespaces: toNamespaces writes one copy to each namespace it lists, so namespace has no effect; list that namespace under toNamespaces and remove namespace`)
}

// dependsOn in upstream's three forms; unknown entries, conditions and
// cycles are errors. Upstream: pkg/types/types_dependson.go.
func TestDependsOn(t *testing.T) {
	body := header + `
    a:
      crdFile: ./crd.yaml
      apiTypes: {group: demo.orkestra.io, version: v1, kind: Website}
      dependsOn: [b]
    b:
      crdFile: ./crd.yaml
      apiTypes: {group: demo.orkestra.io, version: v1, kind: Website}
      dependsOn: {c: healthy}
    c:
      crdFile: ./crd.yaml
      apiTypes: {group: demo.orkestra.io, version: v1, kind: Website}
      dependsOn:
        d: {condition: started}
    d:
      crdFile: ./crd.yaml
      apiTypes: {group: demo.orkestra.io, version: v1, kind: Website}
`
	p := writeKatalog(t, body)
	k, diags := Load(p)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var got []string
	for _, e := range k.CRDs {
		for _, d := range e.DependsOn {
			got = append(got, e.Name+"→"+d.Name+":"+d.Condition)
		}
	}
	if strings.Join(got, " ") != "a→b:started b→c:healthy c→d:started" {
		t.Errorf("dependencies %v", got)
	}
	p = writeKatalog(t, header+`
    a:
      crdFile: ./crd.yaml
      apiTypes: {group: demo.orkestra.io, version: v1, kind: Website}
      dependsOn: {b: started, databse: healthy}
    b:
      crdFile: ./crd.yaml
      apiTypes: {group: demo.orkestra.io, version: v1, kind: Website}
      dependsOn: [a]
    c:
      crdFile: ./crd.yaml
      apiTypes: {group: demo.orkestra.io, version: v1, kind: Website}
      dependsOn: {a: ready}
`)
	_, diags = Load(p)
	var msgs []string
	for _, d := range diags {
		msgs = append(msgs, strings.TrimPrefix(d.Error(), p+":"))
	}
	wantDiags(t, msgs,
		`19:22: [c] dependsOn.a: condition "ready" is not one of started, healthy`,
		`11:31: [a] dependsOn: dependsOn names "databse", which is not an entry of this katalog (upstream's validation refuses it too: dependsOn orders entries of one runtime; to wait for an object another operator serves, read it with operatorBox.cross, giving its apiVersion and kind, and gate the children on it with when:)`,
		`11:19: [a] dependsOn: dependsOn makes a cycle: a → b → a; no entry of it could ever start`)
}

// preReconcile: upstream's older form (when: directly under it) and
// reconcileGate/enqueueGate; sentinels declared (sentinels_test.go).
func TestPreReconcile(t *testing.T) {
	k, _, diags := loadBox(t, `
preReconcile:
  reconcileGate:
    when: "self.spec.replicas > 0"
  enqueueGate:
    or: ["self.metadata.name != 'skip'"]
  sentinels: [generationChanged]
`)
	wantDiags(t, diags)
	g := k.CRDs[0].Box.Gates
	if !slices.Equal(g.Sentinels, []string{"generationChanged"}) {
		t.Errorf("sentinels %v", g.Sentinels)
	}
	if g.ReconcileWhen.Empty() || g.EnqueueOr.Empty() || !g.ReconcileOr.Empty() {
		t.Errorf("gates %+v", g)
	}
	_, _, diags = loadBox(t, `
preReconcile:
  when: "self.spec.replicas > 0"
  reconcileGate:
    external: {url: "https://x"}
`)
	if len(diags) != 2 || !strings.Contains(diags[0], "the reconcile gate is given twice") || !strings.Contains(diags[1], `external: "external" is part of the original katalog format but not supported by this runtime`) {
		t.Errorf("diagnostics %q", diags)
	}
}
