package migrate

import (
	"strings"
	"testing"
)

// Templates and conditions that read cross reads and external results
// (.cross.<as>…, .external.<name>…, upstream's shapes) translate to the CEL
// variables cross and external, rewritten where the shapes differ (found,
// the metadata shortcuts, an external status or called printed as upstream
// printed them), and are verified on live inputs: nothing read and no call
// made, then generated reads and results of every kind.
func TestMigrateLiveInputReads(t *testing.T) {
	dir := copyDir(t, example)
	src := webappKatalog("live") + `      operatorBox:
        cross:
          - crd: webapp
            selector: {name: "{{ .spec.environment }}"}
            as: peer
          - crd: webapp
            selector: {labelSelector: "tier=web"}
            strategy: all
            as: fleet
        onReconcile:
          external:
            - name: health
              url: "https://health.example.com/{{ .metadata.name }}"
              schema:
                type: object
                properties:
                  level: {type: integer}
          configMaps:
            - name: "{{ .metadata.name }}-live"
              data:
                image: "{{ .cross.peer.spec.image }}"
                found: "{{ .cross.peer.found }}"
                peerName: "{{ .cross.peer.name }}"
                status: "{{ .external.health.status }}"
                called: "{{ .external.health.called }}"
                body: "{{ .external.health.body }}"
                failure: "{{ .external.health.error }}"
                level: "{{ .external.health.json.level }}"
                text: "peer {{ .cross.peer.spec.image }} says {{ .external.health.body }}"
                healthy: "{{ if .external.health.called }}yes{{ end }}"
              when:
                - field: external.health.status
                  equals: "200"
                - field: cross.peer.found
                  equals: "true"
                - field: cross.peer.spec.replicas
                  greaterThan: "1"
`
	res := migrateText(t, dir, src, 20)
	var b strings.Builder
	res.WriteReport(&b)
	if !res.Equivalent() || len(res.Check) > 0 {
		t.Fatalf("mismatches %v, check %v\n%s", res.Mismatches, res.Check, b.String())
	}
	for _, it := range res.Left {
		if strings.Contains(it.Legacy, ".cross") || strings.Contains(it.Legacy, ".external") || strings.Contains(it.Legacy, "cross.") || strings.Contains(it.Legacy, "external.") {
			t.Errorf("left legacy: %s: %s", it.Legacy, it.Reason)
		}
	}
	got := string(res.Files[0].Migrated)
	for _, want := range []string{
		"(has(cross.peer) ? 'true' : 'false')",
		"cross.?peer.?metadata.?name",
		"(external.health.status == 0 ? '' : string(external.health.status))",
		"string(external.health.called)",
		"legacy.str(cross, 'peer.spec.replicas')",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("migrated katalog lacks %s:\n%s", want, got)
		}
	}
	if res.Evaluations == 0 {
		t.Errorf("nothing was verified:\n%s", b.String())
	}
}

// A key of a call's JSON object body, which upstream merged into the
// result (.external.queue.queue.pendingJobs): a structured condition reads
// it through json with legacy.str, exactly (missing anywhere is ""); a
// template read stays legacy, its CEL form failing where the legacy read is
// missing.
func TestMigrateExternalJSONBodyKeys(t *testing.T) {
	dir := copyDir(t, example)
	src := webappKatalog("live") + `      operatorBox:
        onReconcile:
          external:
            - name: queue
              url: "https://metrics.example.com/{{ .metadata.name }}"
              schema:
                type: object
                properties:
                  queue:
                    type: object
                    properties:
                      pendingJobs: {type: integer}
          configMaps:
            - name: "{{ .metadata.name }}-queue"
              data:
                pending: "{{ .external.queue.queue.pendingJobs }}"
              when:
                - field: external.queue.queue.pendingJobs
                  greaterThan: "100"
`
	res := migrateText(t, dir, src, 20)
	var b strings.Builder
	res.WriteReport(&b)
	if !res.Equivalent() || len(res.Check) > 0 {
		t.Fatalf("mismatches %v, check %v\n%s", res.Mismatches, res.Check, b.String())
	}
	got := string(res.Files[0].Migrated)
	if want := `legacy.gt(legacy.str(external, 'queue.json.queue.pendingJobs'), 100.0)`; !strings.Contains(got, want) {
		t.Errorf("migrated katalog lacks %s:\n%s", want, got)
	}
	if len(res.Left) != 1 || res.Left[0].Legacy != "{{ .external.queue.queue.pendingJobs }}" || !strings.Contains(res.Left[0].Reason, "a key of the call's JSON response, which upstream merged into its result") {
		t.Errorf("left legacy %+v, want the template read with its reason", res.Left)
	}
	if res.Evaluations == 0 {
		t.Errorf("nothing was verified:\n%s", b.String())
	}
}

// Reads of a cross read with source: translate by the answer's shape (no
// metadata shortcuts: the cr route answers name at the top) and are
// verified on answers generated from the route's type, and on nothing
// found; found stays legacy, as upstream derives it from the answer.
func TestMigrateRemoteCrossReads(t *testing.T) {
	dir := copyDir(t, example)
	src := webappKatalog("live") + `      operatorBox:
        cross:
          - crd: loader
            selector: {name: "{{ .metadata.name }}"}
            source: {host: "http://loader:8080", protocol: cr}
            as: loader
        onReconcile:
          configMaps:
            - name: "{{ .metadata.name }}-remote"
              data:
                phase: "{{ .cross.loader.status.phase }}"
                name: "{{ .cross.loader.name }}"
                found: "{{ .cross.loader.found }}"
              when:
                - field: cross.loader.readyReason
                  equals: Succeeded
`
	res := migrateText(t, dir, src, 20)
	var b strings.Builder
	res.WriteReport(&b)
	if !res.Equivalent() || len(res.Check) > 0 {
		t.Fatalf("mismatches %v, check %v\n%s", res.Mismatches, res.Check, b.String())
	}
	got := string(res.Files[0].Migrated)
	for _, want := range []string{"cross.?loader.?status.?phase", "cross.?loader.?name", "legacy.str(cross, 'loader.readyReason')"} {
		if !strings.Contains(got, want) {
			t.Errorf("migrated katalog lacks %s:\n%s", want, got)
		}
	}
	if len(res.Left) != 1 || res.Left[0].Legacy != "{{ .cross.loader.found }}" || !strings.Contains(res.Left[0].Reason, "test has(cross.loader) instead") {
		t.Errorf("left legacy %+v, want found with its reason", res.Left)
	}
}
