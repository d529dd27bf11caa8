package engine_test

import (
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
)

// liveBox reads another App through a cross read and an HTTP call's
// result, in CEL and legacy templates and conditions (upstream's shapes:
// iAlexeze/orkestra pkg/reconciler/run_cross.go buildCrossResult,
// run_external.go runExternal).
const liveBox = `      operatorBox:
        cross:
          - crd: app
            selector: {name: "${self.spec.image}"}
            as: peer
          - crd: app
            selector: {labelSelector: "tier=pro"}
            as: pros
            strategy: all
        onReconcile:
          external:
            - name: cfg
              url: "https://config.example.com/${self.metadata.name}"
              schema:
                type: object
                properties:
                  level: {type: integer}
            - name: hc
              url: "{{ .external.cfg.body }}"
          configMaps:
            - name: "${self.metadata.name}"
              data:
                peerPhase: "${cross.peer.status.phase}"
                peerImage: "{{ .cross.peer.spec.image }}"
                found: "{{ .cross.peer.found }}"
                pros: "${string(cross.pros.size())}"
                level: "${string(external.cfg.?json.?level.orValue(0))}"
                hcStatus: "{{ .external.hc.status }}"
                called: "${string(external.hc.called)}"
                cfgLevel: "{{ .external.cfg.level }}"
                hcKey: "{{ .external.hc.anything }}"
              when:
                - field: cross.peer.status.phase
                  equals: Running
                - "external.hc.status == 200"
`

func TestLiveInputsTyped(t *testing.T) {
	p, plan, diags := compileBody(t, liveBox)
	if diags.HasErrors() {
		t.Fatalf("compile:\n%v", strings.ReplaceAll(diags.Errors().Error(), p, "k.yaml"))
	}
	e := plan.Entries[0]
	if len(e.Observations) != 2 || len(e.External) != 2 {
		t.Fatalf("observations %d, external calls %d", len(e.Observations), len(e.External))
	}
	cm := e.Hooks["onReconcile"][0]
	self := map[string]any{"apiVersion": "test.orkestra.io/v1", "kind": "App", "metadata": map[string]any{"name": "a", "namespace": "ns"}, "spec": map[string]any{"image": "b"}}
	peer := map[string]any{"apiVersion": "test.orkestra.io/v1", "kind": "App", "metadata": map[string]any{"name": "b", "namespace": "ns"},
		"spec": map[string]any{"image": "nginx"}, "status": map[string]any{"phase": "Running"}}

	// Nothing read yet: the cross read finds nothing, no call was made.
	live := e.NewLive()
	ok, err := cm.When.Eval(e.Scope(self, nil, live))
	if err != nil || ok {
		t.Fatalf("condition before any read: %v, %v; want false", ok, err)
	}
	v, _, err := cm.Fields.Get("data").Eval(e.Scope(self, nil, live))
	if err != nil {
		t.Fatal(err)
	}
	data := v.(map[string]any)
	if data["found"] != "false" || data["called"] != "false" || data["pros"] != "0" || data["hcStatus"] != "" || data["level"] != "0" {
		t.Fatalf("data before any read: %v", data)
	}
	for _, k := range []string{"peerPhase", "cfgLevel", "hcKey"} {
		if _, present := data[k]; present {
			t.Fatalf("a plain reference to a live input not read yet must leave the field unset, got %s: %v", k, data[k])
		}
	}

	live.SetCross(e.Observations[0], []map[string]any{peer})
	live.SetCross(e.Observations[1], []map[string]any{peer, self})
	live.SetExternal("cfg", engine.ExternalResult{Called: true, Status: 200, Body: `{"level": 3}`, JSON: map[string]any{"level": int64(3)}, HasJSON: true})
	live.SetExternal("hc", engine.ExternalResult{Called: true, Status: 200, Body: "ok"})
	s := e.Scope(self, nil, live)
	if ok, err := cm.When.Eval(s); err != nil || !ok {
		t.Fatalf("condition after the reads: %v, %v; want true", ok, err)
	}
	v, _, err = cm.Fields.Get("data").Eval(s)
	if err != nil {
		t.Fatal(err)
	}
	// .external.cfg.level: upstream merged a JSON object body's keys into
	// the result (orkspace/orkestra pkg/external/http_client.go); hc's body
	// is no JSON, so its keys read as missing (the field is left unset).
	want := map[string]any{"peerPhase": "Running", "peerImage": "nginx", "found": "true", "pros": "2", "level": "3", "hcStatus": "200", "called": "true", "cfgLevel": "3"}
	for k, w := range want {
		if got := v.(map[string]any)[k]; got != w {
			t.Errorf("data.%s = %#v, want %#v", k, got, w)
		}
	}
	if hc, present := v.(map[string]any)["hcKey"]; present {
		t.Errorf("data.hcKey = %#v, want it unset: a body that is no JSON object has no keys", hc)
	}
	if _, ok := peer["found"]; ok {
		t.Fatal("the legacy view modified the observed object (the informer cache's)")
	}
}

// Reading what a live input does not have is a load error at the place,
// with did-you-mean, in CEL, legacy templates and conditions; a call reads
// only the calls before it.
func TestLiveInputLoadErrors(t *testing.T) {
	head := `      operatorBox:
        cross:
          - crd: app
            as: peer
        onReconcile:
          external:
            - name: first
              url: "{{ .external.second.body }}"
            - name: second
              url: https://example.com
              schema:
                type: object
                properties:
                  level: {type: integer}
`
	cases := []struct{ name, body, want string }{
		{"CEL typo in the observed CRD's status", `          configMaps:
            - data: {a: "${cross.peer.status.phaze}"}
`, `: [app] operatorBox.onReconcile.configMaps[0].data.a: expression ${cross.peer.status.phaze}: undefined field 'phaze'; did you mean phase?`},
		{"legacy typo in the observed CRD's spec", `          configMaps:
            - data: {a: "{{ .cross.peer.spec.imag }}"}
`, `unknown field .cross.peer.spec.imag: cross.peer.spec has no field "imag" in version v1; did you mean "image"?`},
		{"condition on an undeclared cross read", `          configMaps:
            - data: {a: b}
              when:
                - field: cross.db.status.phase
                  equals: Running
`, `unknown field cross.db: cross has no field "db"`},
		{"a call's JSON typed by its schema", `          configMaps:
            - data: {a: "${string(external.second.json.levl)}"}
`, `expression ${string(external.second.json.levl)}: undefined field 'levl'`},
		{"a key of a call's JSON typed by its schema, legacy", `          configMaps:
            - data: {a: "{{ .external.second.levl }}"}
`, `unknown field .external.second.levl: external.second has no field "levl"; did you mean "level"?`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, diags := compileBody(t, head+tc.body)
			got := diags.Errors().Error()
			if !strings.Contains(got, tc.want) {
				t.Fatalf("want %q in\n%s", tc.want, got)
			}
			if !strings.Contains(got, `operatorBox.onReconcile.external[0].url: unknown field .external.second`) {
				t.Errorf("a call reading a later call's result loaded:\n%s", got)
			}
		})
	}
}
