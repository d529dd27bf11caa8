package katalog

import (
	"strings"
	"testing"
)

// Load errors of the live inputs — cross reads, watches, external calls,
// workload autoscale — each at the position of the key at fault, with what
// to write instead. (Upstream shapes: iAlexeze/orkestra pkg/types/cross.go,
// external.go, types_workload_autoscale.go; the watch entry of
// pkg/types/types.go.) Box lines start at line 15, column 9.
func TestLiveInputLoadErrors(t *testing.T) {
	cases := []struct {
		name, box string
		want      []string
	}{
		{"cross names no target", "cross:\n  - as: db\n",
			[]string{`16:13: [site] operatorBox.cross[0]: a cross read needs crd: (an entry of this katalog) or apiVersion and kind`}},
		{"cross names an unknown entry", "cross:\n  - crd: sit\n",
			[]string{`16:18: [site] operatorBox.cross[0].crd: crd: "sit" is not an entry of this katalog; did you mean "site"?; to read another kind, give its apiVersion and kind`}},
		{"cross strategy", "cross:\n  - crd: site\n    strategy: every\n",
			[]string{`17:23: [site] operatorBox.cross[0].strategy: strategy "every" is not first or all`}},
		{"cross name and labelSelector", "cross:\n  - crd: site\n    selector: {name: a, labelSelector: 'x=y'}\n",
			[]string{`17:48: [site] operatorBox.cross[0].selector.labelSelector: give name or labelSelector, not both`}},
		{"cross as twice", "cross:\n  - crd: site\n  - crd: site\n",
			[]string{`17:18: [site] operatorBox.cross[1].as: cross.site is already declared at KATALOG:16:13; give each cross read its own as:`}},
		{"cross maxMatches", "cross:\n  - crd: site\n    maxMatches: 0\n",
			[]string{`17:25: [site] operatorBox.cross[0].maxMatches: maxMatches must be between 1 and 10000, got 0`}},
		{"cross of a kind needs as", "cross:\n  - apiVersion: v1\n    kind: ConfigMap\n",
			[]string{`16:13: [site] operatorBox.cross[0].as: a cross read whose target is apiVersion/kind, or an endpoint, needs as: (the name it is read by, cross.<as>)`}},
		{"cross as is no name", "cross:\n  - crd: site\n    as: 2x\n",
			[]string{`17:17: [site] operatorBox.cross[0].as: as: "2x" is not a name expressions can read (letters, digits, _ and -, starting with a letter)`}},
		{"watch templated name", "watch:\n  - apiVersion: v1\n    kind: ConfigMap\n    name: '{{ .metadata.name }}'\n",
			[]string{`18:19: [site] operatorBox.watch[0]: a watch selects its objects with literals (it is set up once, not per custom resource); to read an object named after the custom resource, declare it under cross:`}},
		{"watch event", "watch:\n  - apiVersion: v1\n    kind: ConfigMap\n    on: [update, change]\n",
			[]string{`18:26: [site] operatorBox.watch[0].on[1]: event "change" is not create, update or delete`}},
		{"watch keyFrom both", "watch:\n  - apiVersion: v1\n    kind: ConfigMap\n    keyFrom: {label: a, name: b}\n",
			[]string{`18:13: [site] operatorBox.watch[0].keyFrom: keyFrom takes label or name, not both`}},
		{"watch without kind", "watch:\n  - name: shared\n",
			[]string{`16:13: [site] operatorBox.watch[0]: a watch needs apiVersion and kind`}},
		{"watch index is a warning", "watch:\n  - apiVersion: v1\n    kind: ConfigMap\n    index: [{name: a, field: spec.a}]\n",
			[]string{`18:13: warning: [site] operatorBox.watch[0].index: index registers field indexes for Go code reading the watch's cache upstream; nothing here reads them, so it is ignored`}},
		{"external needs name and url", "onReconcile:\n  external:\n    - method: GET\n",
			[]string{`17:15: [site] operatorBox.onReconcile.external[0]: an external call needs name: (its result reads as external.<name>)`,
				`17:15: [site] operatorBox.onReconcile.external[0]: an external call needs url:`}},
		{"external method", "onReconcile:\n  external:\n    - {name: a, url: 'http://x', method: FETCH}\n",
			[]string{`17:50: [site] operatorBox.onReconcile.external[0].method: method "FETCH" is not one of GET, HEAD, POST, PUT, PATCH, DELETE`}},
		{"external token in the katalog", "onReconcile:\n  external:\n    - {name: a, url: 'http://x', token: s3cret}\n",
			[]string{`17:49: [site] operatorBox.onReconcile.external[0].token: token: takes an environment variable of the operator, written $NAME; a token written into the katalog is readable by anyone who can read the katalog — put it in a Secret and use auth: {secretRef: {name: …, key: …}}`}},
		{"external Authorization header", "onReconcile:\n  external:\n    - name: a\n      url: 'http://x'\n      headers: {Authorization: Bearer x}\n",
			[]string{`19:25: [site] operatorBox.onReconcile.external[0].headers.Authorization: the Authorization header carries a credential: take it from a Secret with auth: {secretRef: {name: …, key: …}} (or token: $ENV) instead of writing it into the katalog`}},
		{"external name twice", "onCreate:\n  external:\n    - {name: a, url: 'http://x'}\nonReconcile:\n  external:\n    - {name: a, url: 'http://y'}\n",
			[]string{`20:22: [site] operatorBox.onReconcile.external[0].name: an external call named "a" is already declared at KATALOG:17:22; names are the entry's, whatever the hook`}},
		{"external timeout", "onReconcile:\n  external:\n    - {name: a, url: 'http://x', timeout: soon}\n",
			[]string{`17:51: [site] operatorBox.onReconcile.external[0].timeout: "soon" is not a duration; write e.g. 90s, 15m, 12h, 7d, 2w, 3mo or 1y`}},
		{"external schema not structural", "onReconcile:\n  external:\n    - name: a\n      url: 'http://x'\n      schema: {type: object, properties: {n: {}}}\n",
			[]string{`19:23: [site] operatorBox.onReconcile.external[0].schema: schema is not structural (every field needs a type, as in a CRD)`}},
		{"external secret named by an expression", "onReconcile:\n  external:\n    - name: a\n      url: 'http://x'\n      auth: {secretRef: {name: '{{ .metadata.name }}'}}\n",
			[]string{`19:33: [site] operatorBox.onReconcile.external[0].auth.secretRef: secretRef names its Secret with literals (the install grants read access to exactly that Secret)`}},
		{"autoscale on a kind without replicas", "onReconcile:\n  configMaps:\n    - data: {a: b}\n      autoscale: {max: 3}\n",
			[]string{`18:15: [site] operatorBox.onReconcile.configMaps[0].autoscale: autoscale: scales a workload's replicas; configMaps have none (it goes on deployments, statefulSets and replicaSets)`}},
		{"autoscale needs max", "onReconcile:\n  deployments:\n    - image: nginx\n      autoscale:\n        scaleUp: {target: 3, conditions: {when: ['self.spec.replicas > 1']}}\n",
			[]string{`18:15: [site] operatorBox.onReconcile.deployments[0].autoscale: autoscale needs max: (the most replicas it may set)`}},
		{"autoscale min not below max", "onReconcile:\n  deployments:\n    - image: nginx\n      autoscale:\n        min: 4\n        max: 4\n        scaleUp: {target: 4, conditions: {when: ['true']}}\n",
			[]string{`19:22: [site] operatorBox.onReconcile.deployments[0].autoscale.min: min (4) must be less than max (4)`}},
		{"autoscale target over max", "onReconcile:\n  deployments:\n    - image: nginx\n      autoscale:\n        max: 4\n        scaleUp: {target: 9, conditions: {when: ['true']}}\n",
			[]string{`20:35: [site] operatorBox.onReconcile.deployments[0].autoscale.scaleUp.target: target (9) exceeds max (4)`}},
		{"autoscale target and step", "onReconcile:\n  deployments:\n    - image: nginx\n      autoscale:\n        max: 4\n        scaleDown: {target: 1, decrement: 1, conditions: {when: ['true']}}\n",
			[]string{`20:40: [site] operatorBox.onReconcile.deployments[0].autoscale.scaleDown.decrement: target and decrement are exclusive: target jumps to a count, decrement steps from the current one`}},
		{"autoscale rule without conditions", "onReconcile:\n  deployments:\n    - image: nginx\n      autoscale:\n        max: 4\n        scaleUp: {increment: 1}\n",
			[]string{`20:17: [site] operatorBox.onReconcile.deployments[0].autoscale.scaleUp: scaleUp needs conditions: {when: […]} (or or: […]): without them it would fire on every reconcile`}},
		{"autoscale increment on scaleDown", "onReconcile:\n  deployments:\n    - image: nginx\n      autoscale:\n        max: 4\n        scaleDown: {increment: 1, conditions: {when: ['true']}}\n",
			[]string{`20:29: [site] operatorBox.onReconcile.deployments[0].autoscale.scaleDown.increment: unknown key "increment"; did you mean "decrement"?`,
				`20:17: [site] operatorBox.onReconcile.deployments[0].autoscale.scaleDown: scaleDown needs target: (a replica count) or decrement: (a step)`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, diags := loadBox(t, tc.box)
			var got []string
			for _, d := range diags {
				if !strings.Contains(d, "no schema for") {
					got = append(got, d)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("diagnostic %d:\n  %s\nwant it to start\n  %s", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// crossAccess: false on an entry (upstream: examples/advanced/
// 19-endpoint-control/03-fully-dark) makes cross reads of its custom
// resources read nothing; each such read is marked and warned about. Set
// katalog-wide, it is an error naming the entry-level key.
func TestCrossAccessDenied(t *testing.T) {
	body := header + strings.Replace(entry, "      crdFile:", "      crossAccess: false\n      crdFile:", 1) +
		"      operatorBox:\n        cross:\n          - crd: site\n            as: peer\n"
	p := writeKatalog(t, body)
	k, diags := Load(p)
	var got []string
	for _, d := range diags {
		got = append(got, strings.ReplaceAll(d.Error(), p+":", ""))
	}
	want := `17:18: warning: [site] operatorBox.cross[0]: entry "site" has crossAccess: false, so cross.peer always reads as not found (legacy .cross.peer.found "false"), as upstream; remove the read, or crossAccess: false from "site"`
	if len(got) != 1 || got[0] != want {
		t.Fatalf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	if e := k.Entry("site"); !e.DeniesCross || !e.Box.Observations[0].Denied {
		t.Errorf("DeniesCross %v, Denied %v; want both", e.DeniesCross, e.Box.Observations[0].Denied)
	}

	p = writeKatalog(t, strings.Replace(header, "spec:\n", "spec:\n  crossAccess: false\n", 1)+entry)
	_, diags = Load(p)
	if len(diags) != 1 || !strings.Contains(diags[0].Error(), "spec.crossAccess") || !strings.Contains(diags[0].Error(), "crossAccess is set per entry here") {
		t.Errorf("katalog-wide crossAccess: %v", diags)
	}
}
