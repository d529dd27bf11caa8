package engine_test

import (
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
)

// remoteBox reads another runtime's /katalog routes and an endpoint
// (upstream: examples/advanced/12-autoscale/04-sibling-in-cluster and
// 05-from-external-api), in CEL typed by the routes' answers and in legacy
// templates with upstream's found.
const remoteBox = `      operatorBox:
        cross:
          - crd: loader
            selector: {name: "${self.metadata.name}"}
            source: {host: "http://loader:8080", protocol: cr}
            as: loaderCR
          - crd: loader
            source: {host: "http://loader:8080", protocol: health}
            as: loaderHealth
          - crd: loader
            source: {host: "http://loader:8080", protocol: metrics}
            as: loaderInfo
          - as: feed
            source: {endpoint: "http://metrics.example.com/${self.metadata.name}"}
        onReconcile:
          configMaps:
            - name: "${self.metadata.name}"
              data:
                ready: "${has(cross.loaderCR) && cross.loaderCR.ready ? 'yes' : 'no'}"
                phase: "${cross.?loaderCR.?status.?phase.orValue('')}"
                state: "${cross.loaderHealth.state}"
                depth: "${string(cross.loaderInfo.metrics.queueDepth)}"
                feed: "${string(cross.feed.anything.goes)}"
                legacyFound: "{{ .cross.loaderCR.found }}"
                legacyFeed: "{{ .cross.feed.found }}"
                legacyPhase: "{{ .cross.loaderCR.status.phase }}"
`

func TestRemoteCrossReadsTyped(t *testing.T) {
	p, plan, diags := compileBody(t, remoteBox)
	if diags.HasErrors() {
		t.Fatalf("compile:\n%v", strings.ReplaceAll(diags.Errors().Error(), p, "k.yaml"))
	}
	e := plan.Entries[0]
	if len(e.Remote) != 4 || len(e.Observations) != 0 {
		t.Fatalf("remote reads %d, informer reads %d; want 4 and 0", len(e.Remote), len(e.Observations))
	}
	data := e.Hooks["onReconcile"][0].Fields.Get("data")
	self := map[string]any{"apiVersion": "test.orkestra.io/v1", "kind": "App", "metadata": map[string]any{"name": "a", "namespace": "ns"}, "spec": map[string]any{"image": "b"}}

	// Nothing read: CEL sees no key, legacy upstream's placeholder.
	live := e.NewLive()
	live.SetRemote("loaderHealth", map[string]any{"state": "healthy"})
	live.SetRemote("loaderInfo", map[string]any{"metrics": map[string]any{"queueDepth": int64(3)}})
	live.SetRemote("feed", map[string]any{"anything": map[string]any{"goes": "x"}})
	v, _, err := data.Eval(e.Scope(self, nil, live))
	if err != nil {
		t.Fatal(err)
	}
	got := v.(map[string]any)
	want := map[string]any{"ready": "no", "phase": "", "state": "healthy", "depth": "3", "feed": "x", "legacyFound": "false", "legacyFeed": "false"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("not found: data.%s = %#v, want %#v", k, got[k], w)
		}
	}
	if _, present := got["legacyPhase"]; present {
		t.Errorf("a plain reference into a read that found nothing must leave the field unset, got %#v", got["legacyPhase"])
	}

	// Found: upstream's found is "true" when the answer has a name.
	live.SetRemote("loaderCR", map[string]any{"name": "a", "ready": true, "status": map[string]any{"phase": "Loading"}})
	v, _, err = data.Eval(e.Scope(self, nil, live))
	if err != nil {
		t.Fatal(err)
	}
	got = v.(map[string]any)
	for k, w := range map[string]any{"ready": "yes", "phase": "Loading", "legacyFound": "true", "legacyPhase": "Loading"} {
		if got[k] != w {
			t.Errorf("found: data.%s = %#v, want %#v", k, got[k], w)
		}
	}
}

// A route's answer is typed by its response type: reading what it does not
// have is a load error; an endpoint with a schema is
// typed by it.
func TestRemoteCrossReadLoadErrors(t *testing.T) {
	cases := []struct{ name, box, want string }{
		{"health route", `          - crd: loader
            source: {host: "http://loader:8080", protocol: health}
            as: h
        onReconcile:
          configMaps:
            - data: {a: "${string(cross.h.healty)}"}
`, `expression ${string(cross.h.healty)}: undefined field 'healty'`},
		{"info route metrics", `          - crd: loader
            source: {host: "http://loader:8080"}
            as: i
        onReconcile:
          configMaps:
            - data: {a: "${string(cross.i.metrics.queueDept)}"}
`, `undefined field 'queueDept'`},
		{"legacy read of the events route", `          - crd: loader
            selector: {name: x}
            source: {host: "http://loader:8080", protocol: events}
            as: ev
        onReconcile:
          configMaps:
            - data: {a: "{{ .cross.ev.totl }}"}
`, `unknown field .cross.ev.totl: cross.ev has no field "totl"; did you mean "total"?`},
		{"endpoint schema", `          - as: feed
            source:
              endpoint: "http://metrics.example.com/q"
              schema: {type: object, properties: {depth: {type: integer}}}
        onReconcile:
          configMaps:
            - data: {a: "${string(cross.feed.dept)}"}
`, `undefined field 'dept'`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, diags := compileBody(t, "      operatorBox:\n        cross:\n"+tc.box)
			if got := diags.Errors().Error(); !strings.Contains(got, tc.want) {
				t.Fatalf("want %q in\n%s", tc.want, got)
			}
		})
	}
}

// The legacy view of an answer has spec and status when the answer has no
// such key (a field of them reads as missing, as for an informer read's
// object), and keeps them as answered when it has (a health answer's
// status is the HTTP code).
func TestRemoteLegacyView(t *testing.T) {
	l := engine.SampleLive(nil, nil, nil, nil)
	l.SetRemote("h", map[string]any{"name": "loader", "status": int64(200)})
	l.SetRemote("feed", map[string]any{"metrics": map[string]any{"queueDepth": int64(1)}})
	s := &engine.Scope{}
	l.Apply(s)
	legacy := s.Roots[engine.CrossVar].(map[string]any)
	h, feed := legacy["h"].(map[string]any), legacy["feed"].(map[string]any)
	if h["status"] != int64(200) || h["found"] != "true" || h["spec"] == nil {
		t.Errorf("health answer's legacy view %v", h)
	}
	if st, ok := feed["status"].(map[string]any); !ok || len(st) != 0 || feed["found"] != "false" {
		t.Errorf("endpoint answer's legacy view %v", feed)
	}
	if _, added := s.Vars[engine.CrossVar].(map[string]any)["feed"].(map[string]any)["status"]; added {
		t.Error("the CEL view of the answer gained a status it does not have")
	}
}
