package katalog

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// loadBox loads a katalog of one Website entry whose operatorBox is box,
// with top prepended to the document (e.g. a profiles: block).
func loadProfiled(t *testing.T, top, box string) (*Katalog, string, Diagnostics) {
	t.Helper()
	var b strings.Builder
	b.WriteString(top)
	b.WriteString(entrySpec("      operatorBox:\n"))
	for _, line := range strings.Split(strings.Trim(box, "\n"), "\n") {
		b.WriteString("        " + line + "\n")
	}
	dir := writeFiles(t, map[string]string{"katalog.yaml": "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\n" + b.String()})
	k, diags := Load(filepath.Join(dir, "katalog.yaml"))
	return k, dir, diags
}

// fieldsJSON is a resource's fields as JSON (selections shown by name).
func fieldsJSON(v *Value) string {
	b, _ := json.Marshal(plainOf(v))
	return string(b)
}

func plainOf(v *Value) any {
	if v == nil {
		return nil
	}
	switch v.Kind {
	case MapValue:
		m := map[string]any{}
		for _, e := range v.Map {
			m[e.Key] = plainOf(e.Value)
		}
		return m
	case ListValue:
		l := []any{}
		for _, it := range v.List {
			l = append(l, plainOf(it))
		}
		return l
	case SelectValue:
		m := map[string]any{"select": v.Select.Key.Str}
		for _, c := range v.Select.Cases {
			m[c.Name] = plainOf(c.Value)
		}
		return m
	}
	return v.Scalar
}

// Every built-in profile expands into exactly upstream's values
// (iAlexeze/orkestra pkg/profiles; the expectations are written out here,
// not read from the table under test).
func TestBuiltinProfiles(t *testing.T) {
	rl := func(rc, rm, lc, lm string) string {
		return fmt.Sprintf(`{"limits":{"cpu":%q,"memory":%q},"requests":{"cpu":%q,"memory":%q}}`, lc, lm, rc, rm)
	}
	probe := func(delay, period, failure, timeout int) string {
		return fmt.Sprintf(`{"failureThreshold":%d,"httpGet":{"path":"/healthz","port":8080},"initialDelaySeconds":%d,"periodSeconds":%d,"successThreshold":1,"timeoutSeconds":%d}`, failure, delay, period, timeout)
	}
	quota := func(pods, cpu, mem, rc, rm, lc, lm string) string {
		return fmt.Sprintf(`{"cpu":%q,"limits.cpu":%q,"limits.memory":%q,"memory":%q,"pods":%q,"requests.cpu":%q,"requests.memory":%q}`, cpu, lc, lm, mem, pods, rc, rm)
	}
	cases := []struct {
		class, name, decl, field, want string
	}{
		{"resources", "tiny", "deployments:\n  - image: x\n    resources: {profile: tiny}", "resources", rl("25m", "64Mi", "100m", "128Mi")},
		{"resources", "small", "deployments:\n  - image: x\n    resources: {profile: small}", "resources", rl("100m", "128Mi", "500m", "512Mi")},
		{"resources", "medium", "deployments:\n  - image: x\n    resources: {profile: medium}", "resources", rl("250m", "256Mi", "1", "1Gi")},
		{"resources", "large", "deployments:\n  - image: x\n    resources: {profile: large}", "resources", rl("500m", "512Mi", "2", "2Gi")},
		{"resources", "burst", "deployments:\n  - image: x\n    resources: {profile: burst}", "resources", rl("200m", "256Mi", "2", "2Gi")},
		{"resources", "steady", "deployments:\n  - image: x\n    resources: {profile: steady}", "resources", rl("300m", "256Mi", "600m", "512Mi")},
		{"resources", "compute-heavy", "deployments:\n  - image: x\n    resources: {profile: compute-heavy}", "resources", rl("1", "512Mi", "2", "1Gi")},
		{"resources", "memory-heavy", "deployments:\n  - image: x\n    resources: {profile: memory-heavy}", "resources", rl("250m", "1Gi", "500m", "2Gi")},
		{"resources", "case-insensitive", "deployments:\n  - image: x\n    resources: {profile: Small}", "resources", rl("100m", "128Mi", "500m", "512Mi")},
		{"probes", "fast", "deployments:\n  - image: x\n    port: 8080\n    probes: {liveness: {type: http, path: /healthz, profile: fast}}", "livenessProbe", probe(5, 10, 2, 5)},
		{"probes", "standard", "deployments:\n  - image: x\n    port: 8080\n    probes: {liveness: {type: http, path: /healthz, profile: standard}}", "livenessProbe", probe(15, 20, 3, 10)},
		{"probes", "patient", "deployments:\n  - image: x\n    port: 8080\n    probes: {liveness: {type: http, path: /healthz, profile: patient}}", "livenessProbe", probe(30, 30, 5, 10)},
		{"probes", "slow-start", "deployments:\n  - image: x\n    port: 8080\n    probes: {liveness: {type: http, path: /healthz, profile: slow-start}}", "livenessProbe", probe(0, 10, 30, 10)},
		{"probes", "none is standard", "deployments:\n  - image: x\n    port: 8080\n    probes: {liveness: {type: http, path: /healthz}}", "livenessProbe", probe(15, 20, 3, 10)},
		{"containerSecurity", "baseline", "deployments:\n  - image: x\n    securityContext: {profile: baseline}", "securityContext",
			`{"allowPrivilegeEscalation":false,"capabilities":{"drop":["NET_RAW"]}}`},
		{"containerSecurity", "restricted", "deployments:\n  - image: x\n    securityContext: {profile: restricted}", "securityContext",
			`{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]},"runAsNonRoot":true}`},
		{"containerSecurity", "hardened", "deployments:\n  - image: x\n    securityContext: {profile: hardened}", "securityContext",
			`{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]},"readOnlyRootFilesystem":true,"runAsNonRoot":true}`},
		{"podSecurity", "baseline", "deployments:\n  - image: x\n    podSecurity: {profile: baseline}", "podSecurityContext", `{"runAsNonRoot":false}`},
		{"podSecurity", "restricted", "deployments:\n  - image: x\n    podSecurity: {profile: restricted}", "podSecurityContext", `{"runAsNonRoot":true,"runAsUser":1000}`},
		{"podSecurity", "hardened", "deployments:\n  - image: x\n    podSecurity: {profile: hardened}", "podSecurityContext",
			`{"fsGroup":65534,"runAsGroup":65534,"runAsNonRoot":true,"runAsUser":65534}`},
		{"rollingUpdate", "safe", "deployments:\n  - image: x\n    rollingUpdate: {profile: safe}", "rollingUpdate", `{"maxSurge":"1","maxUnavailable":"0"}`},
		{"rollingUpdate", "fast", "deployments:\n  - image: x\n    rollingUpdate: {profile: fast}", "rollingUpdate", `{"maxSurge":"25%","maxUnavailable":"25%"}`},
		{"rollingUpdate", "blue-green", "deployments:\n  - image: x\n    rollingUpdate: {profile: blue-green}", "rollingUpdate", `{"maxSurge":"100%","maxUnavailable":"0"}`},
		{"pdb", "zero-downtime", "pdb:\n  - behavior: {profile: zero-downtime}", "", `{"minAvailable":"100%"}`},
		{"pdb", "rolling", "pdb:\n  - behavior: {profile: rolling}", "", `{"maxUnavailable":"1"}`},
		{"pdb", "relaxed", "pdb:\n  - behavior: {profile: relaxed}", "", `{"maxUnavailable":"25%"}`},
		{"hpa", "web", "hpa:\n  - {scaleTargetRef: {name: w}, maxReplicas: 3, behavior: {profile: web}}", "",
			`{"behavior":{"scaleDown":{"policies":[{"periodSeconds":60,"type":"Percent","value":10}],"selectPolicy":"Min","stabilizationWindowSeconds":300},"scaleUp":{"policies":[{"periodSeconds":15,"type":"Percent","value":100},{"periodSeconds":15,"type":"Pods","value":4}],"selectPolicy":"Max","stabilizationWindowSeconds":0}},"maxReplicas":3,"scaleTargetRef":{"name":"w"},"targetCPUUtilizationPercentage":70}`},
		{"hpa", "api", "hpa:\n  - {scaleTargetRef: {name: w}, maxReplicas: 3, behavior: {profile: api}}", "",
			`{"behavior":{"scaleDown":{"policies":[{"periodSeconds":60,"type":"Percent","value":5}],"selectPolicy":"Min","stabilizationWindowSeconds":600},"scaleUp":{"policies":[{"periodSeconds":15,"type":"Percent","value":100},{"periodSeconds":15,"type":"Pods","value":4}],"selectPolicy":"Max","stabilizationWindowSeconds":0}},"maxReplicas":3,"scaleTargetRef":{"name":"w"},"targetCPUUtilizationPercentage":60}`},
		{"hpa", "latency-sensitive", "hpa:\n  - {scaleTargetRef: {name: w}, maxReplicas: 3, behavior: {profile: latency-sensitive}}", "",
			`{"behavior":{"scaleDown":{"policies":[{"periodSeconds":120,"type":"Percent","value":5}],"selectPolicy":"Min","stabilizationWindowSeconds":900},"scaleUp":{"policies":[{"periodSeconds":15,"type":"Percent","value":200},{"periodSeconds":15,"type":"Pods","value":10}],"selectPolicy":"Max","stabilizationWindowSeconds":0}},"maxReplicas":3,"scaleTargetRef":{"name":"w"},"targetCPUUtilizationPercentage":50}`},
		{"hpa", "batch", "hpa:\n  - {scaleTargetRef: {name: w}, maxReplicas: 3, behavior: {profile: batch}}", "",
			`{"behavior":{"scaleDown":{"policies":[{"periodSeconds":60,"type":"Percent","value":50}],"selectPolicy":"Min","stabilizationWindowSeconds":120},"scaleUp":{"policies":[{"periodSeconds":60,"type":"Percent","value":100}],"selectPolicy":"Max","stabilizationWindowSeconds":30}},"maxReplicas":3,"scaleTargetRef":{"name":"w"},"targetCPUUtilizationPercentage":80}`},
		{"hpa", "cost-optimized", "hpa:\n  - {scaleTargetRef: {name: w}, maxReplicas: 3, behavior: {profile: cost-optimized}}", "",
			`{"behavior":{"scaleDown":{"policies":[{"periodSeconds":60,"type":"Percent","value":50}],"selectPolicy":"Max","stabilizationWindowSeconds":60},"scaleUp":{"policies":[{"periodSeconds":60,"type":"Percent","value":25}],"selectPolicy":"Min","stabilizationWindowSeconds":180}},"maxReplicas":3,"scaleTargetRef":{"name":"w"},"targetCPUUtilizationPercentage":80}`},
		{"hpa", "explicit CPU target wins", "hpa:\n  - {scaleTargetRef: {name: w}, maxReplicas: 3, targetCPUUtilizationPercentage: 55, behavior: {profile: batch}}", "targetCPUUtilizationPercentage", `55`},
		{"networkPolicies", "deny-all", "networkPolicies:\n  - {podSelector: {}, profile: deny-all}", "",
			`{"egress":[],"ingress":[],"podSelector":{},"policyTypes":["Ingress","Egress"]}`},
		{"networkPolicies", "deny-all-ingress", "networkPolicies:\n  - {podSelector: {}, profile: deny-all-ingress}", "",
			`{"ingress":[],"podSelector":{},"policyTypes":["Ingress"]}`},
		{"networkPolicies", "deny-all-egress", "networkPolicies:\n  - {podSelector: {}, profile: deny-all-egress}", "",
			`{"egress":[],"podSelector":{},"policyTypes":["Egress"]}`},
		{"networkPolicies", "allow-same-namespace", "networkPolicies:\n  - {podSelector: {}, profile: allow-same-namespace}", "",
			`{"ingress":[{"from":[{"podSelector":{}}]}],"podSelector":{},"policyTypes":["Ingress"]}`},
		{"networkPolicies", "allow-dns-egress", "networkPolicies:\n  - {podSelector: {}, profile: allow-dns-egress}", "",
			`{"egress":[{"ports":[{"port":"53","protocol":"UDP"},{"port":"53","protocol":"TCP"}]}],"podSelector":{},"policyTypes":["Egress"]}`},
		{"resourceQuotas", "small", "resourceQuotas:\n  - {profile: small}", "hard", quota("10", "2", "4Gi", "1", "2Gi", "2", "4Gi")},
		{"resourceQuotas", "medium", "resourceQuotas:\n  - {profile: medium}", "hard", quota("20", "4", "8Gi", "2", "4Gi", "4", "8Gi")},
		{"resourceQuotas", "large", "resourceQuotas:\n  - {profile: large}", "hard", quota("50", "8", "16Gi", "4", "8Gi", "8", "16Gi")},
		{"resourceQuotas", "xlarge", "resourceQuotas:\n  - {profile: xlarge}", "hard", quota("100", "16", "32Gi", "8", "16Gi", "16", "32Gi")},
	}
	for _, tc := range cases {
		t.Run(tc.class+"/"+tc.name, func(t *testing.T) {
			k, _, diags := loadProfiled(t, "", "onReconcile:\n"+indent(tc.decl, "  "))
			if diags.HasErrors() {
				t.Fatal(diags.Errors())
			}
			r := k.CRDs[0].Box.Hooks[OnReconcile].Resources[0]
			got := r.Fields
			if tc.field != "" {
				got = r.Fields.Get(tc.field)
			}
			if s := fieldsJSON(got); s != tc.want {
				t.Errorf("got  %s\nwant %s", s, tc.want)
			}
		})
	}
}

func indent(s, by string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = by + lines[i]
	}
	return strings.Join(lines, "\n")
}

// The reconciler profiles set workers, resync and the queue depth where the
// entry sets none (upstream: inline settings override the profile).
func TestReconcilerProfiles(t *testing.T) {
	cases := []struct {
		name, top, box    string
		workers, maxDepth int
		resync            string
	}{
		{"high-throughput", "", "reconciler: {profile: high-throughput}", 10, 1000, "5m0s"},
		{"conservative", "", "reconciler: {profile: conservative}", 2, 100, "1m0s"},
		{"development", "", "reconciler: {profile: development}", 1, 50, "30s"},
		{"inline settings win", "", "reconciler: {profile: high-throughput, workers: 3}", 3, 1000, "5m0s"},
		{"defined", "profiles:\n  reconciler:\n    - {name: api, workers: 4, resync: 30s, queue: {maxDepth: 200}}\n", "reconciler: {profile: api}", 4, 200, "30s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, _, diags := loadProfiled(t, tc.top, tc.box)
			if diags.HasErrors() {
				t.Fatal(diags.Errors())
			}
			e := k.CRDs[0]
			if e.Workers != tc.workers || e.Queue == nil || e.Queue.MaxDepth != tc.maxDepth || e.Resync.String() != tc.resync {
				t.Errorf("workers %d, queue %+v, resync %s; want %d, %d, %s", e.Workers, e.Queue, e.Resync, tc.workers, tc.maxDepth, tc.resync)
			}
		})
	}
}

// Profiles the katalog (or a motif it imports) defines override a built-in
// of the same name and are matched exactly; a name defined twice, a profile
// written with the fields it stands for, and an unknown name are errors
// naming what to write.
func TestDefinedProfilesAndErrors(t *testing.T) {
	defined := "profiles:\n  resources:\n    - name: small\n      requests: {cpu: 1m}\n    - name: Team\n      limits: {cpu: \"2\"}\n"
	k, _, diags := loadProfiled(t, defined, "onReconcile:\n  deployments:\n    - {image: x, resources: {profile: small}}\n    - {image: x, resources: {profile: Team}}")
	if diags.HasErrors() {
		t.Fatal(diags.Errors())
	}
	rs := k.CRDs[0].Box.Hooks[OnReconcile].Resources
	if got := fieldsJSON(rs[0].Fields.Get("resources")); got != `{"requests":{"cpu":"1m"}}` {
		t.Errorf("the defined small does not override the built-in: %s", got)
	}
	if got := fieldsJSON(rs[1].Fields.Get("resources")); got != `{"limits":{"cpu":"2"}}` {
		t.Errorf("Team: %s", got)
	}

	errs := []struct{ name, top, box, want string }{
		{"defined names match exactly", defined, "onReconcile:\n  deployments:\n    - {image: x, resources: {profile: team}}",
			`[site] operatorBox.onReconcile.deployments[0].resources.profile: unknown resource profile "team"; built-in: burst, compute-heavy, large, medium, memory-heavy, small, steady, tiny; defined under profiles.resources: Team, small; did you mean "Team"?`},
		{"unknown", "", "onReconcile:\n  resourceQuotas:\n    - {profile: xlarg}",
			`[site] operatorBox.onReconcile.resourceQuotas[0].profile: unknown ResourceQuota profile "xlarg"; built-in: large, medium, small, xlarge; define your own under profiles.resourceQuotas; did you mean "xlarge"?`},
		{"limit ranges have no built-ins", "", "onReconcile:\n  limitRanges:\n    - {profile: minimal}",
			`unknown LimitRange profile "minimal"; define your own under profiles.limitRanges`},
		{"profile and fields", "", "onReconcile:\n  deployments:\n    - {image: x, resources: {profile: small, requests: {cpu: 1m}}}",
			`[site] operatorBox.onReconcile.deployments[0].resources.requests: resources.profile stands for the resource profile's fields; write the profile or the fields, not both`},
		{"profile and rules", "", "onReconcile:\n  networkPolicies:\n    - {profile: deny-all, ingress: []}",
			`[site] operatorBox.onReconcile.networkPolicies[0].ingress: profile deny-all stands for ingress; write the profile or the rules, not both`},
		{"probe profile and timing", "", "onReconcile:\n  deployments:\n    - {image: x, port: 80, probes: {liveness: {path: /, profile: fast, periodSeconds: 3}}}",
			`[site] operatorBox.onReconcile.deployments[0].probes.liveness.periodSeconds: the probe's profile sets its timing; write the profile or periodSeconds, not both`},
		{"probe without port", "", "onReconcile:\n  deployments:\n    - {image: x, probes: {readiness: {type: tcp}}}",
			`[site] operatorBox.onReconcile.deployments[0].probes.readiness.port: a tcp probe needs port: (the workload declares no port)`},
		{"exec probe without command", "", "onReconcile:\n  deployments:\n    - {image: x, probes: {startup: {type: exec}}}",
			`[site] operatorBox.onReconcile.deployments[0].probes.startup.command: an exec probe needs command:`},
		{"podSecurity beside podSecurityContext", "", "onReconcile:\n  deployments:\n    - {image: x, podSecurityContext: {runAsUser: 1}, podSecurity: {profile: restricted}}",
			`podSecurity is upstream's name for podSecurityContext, which is also set at`},
		{"pdb profile beside minAvailable", "", "onReconcile:\n  pdb:\n    - {minAvailable: 1, behavior: {profile: rolling}}",
			`[site] operatorBox.onReconcile.pdb[0].minAvailable: behavior.profile sets the disruption budget; write the profile or minAvailable, not both`},
		{"defined twice", "profiles:\n  pdb:\n    - {name: a, minAvailable: \"1\"}\n    - {name: a, maxUnavailable: \"1\"}\n", "onReconcile: {}",
			`profiles.pdb[1].name: PodDisruptionBudget profile "a" is defined twice: here and at`},
		{"reconciler profile as an expression", "", "reconciler: {profile: \"{{ .spec.tier }}\"}",
			`[site] operatorBox.reconciler.profile: a reconciler profile sets workers and resync when the operator starts, so it is named by a literal, not an expression`},
		{"profiles.include of a missing file", "profiles:\n  include: ./p.yaml\n", "onReconcile: {}",
			`p.yaml not found (paths are relative to the file that names them)`},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			_, dir, diags := loadProfiled(t, tc.top, tc.box)
			got := diagLines(dir, diags.Errors())
			if !strings.Contains(got, tc.want) {
				t.Errorf("errors:\n%s\nwant one containing\n%s", got, tc.want)
			}
		})
	}
}

// A profile named by an expression becomes a selection among every profile
// of its class, each case expanded (the name is evaluated per object).
func TestProfileNamedByAnExpression(t *testing.T) {
	k, _, diags := loadProfiled(t, "profiles:\n  resourceQuotas:\n    - {name: tiny, hard: {pods: \"2\"}}\n",
		"onReconcile:\n  resourceQuotas:\n    - profile: \"${self.spec.tier}\"")
	if diags.HasErrors() {
		t.Fatal(diags.Errors())
	}
	hard := k.CRDs[0].Box.Hooks[OnReconcile].Resources[0].Fields.Get("hard")
	if hard == nil || hard.Kind != SelectValue {
		t.Fatalf("hard is %v, want a selection", hard)
	}
	var names []string
	for _, c := range hard.Select.Cases {
		names = append(names, fmt.Sprintf("%s/%v", c.Name, c.Fold))
	}
	if got := strings.Join(names, " "); got != "tiny/false large/true medium/true small/true xlarge/true" {
		t.Errorf("cases %s", got)
	}
	if hard.Select.Key.Str != "${self.spec.tier}" {
		t.Errorf("key %q", hard.Select.Key.Str)
	}
}

// profiles.include reads a fragment holding a profiles: block (upstream's
// ExpandProfileInclude), its profiles usable like the katalog's own.
func TestProfilesInclude(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"k.yaml": "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nprofiles:\n  include: ./shared/profiles.yaml\n  pdb:\n    - {name: one, minAvailable: \"1\"}\n" +
			entrySpec("      operatorBox:\n        onReconcile:\n          pdb:\n            - {name: a, behavior: {profile: team}}\n            - {name: b, behavior: {profile: one}}\n"),
		"shared/profiles.yaml": "profiles:\n  pdb:\n    - {name: team, maxUnavailable: \"2\"}\n",
	})
	k, diags := Load(filepath.Join(dir, "k.yaml"))
	if diags.HasErrors() {
		t.Fatal(diagLines(dir, diags))
	}
	rs := k.CRDs[0].Box.Hooks[OnReconcile].Resources
	if a, b := fieldsJSON(rs[0].Fields), fieldsJSON(rs[1].Fields); a != `{"maxUnavailable":"2","name":"a"}` || b != `{"minAvailable":"1","name":"b"}` {
		t.Errorf("a %s, b %s", a, b)
	}
}
