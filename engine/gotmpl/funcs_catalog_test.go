package gotmpl

import (
	"strings"
	"testing"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
)

// catalogChildren are the children of the catalog tests, one of each kind
// the original's child readers read, as the API server gives them.
func catalogChildren() map[string]any {
	return engine.ChildrenView(map[string][]map[string]any{
		"deployments": {{
			"metadata": map[string]any{
				"name": "web", "namespace": "prod-ns", "uid": "4b3f8d21-8e3a-4f8c-b9d2-1a2b3c4d5e6f",
				"resourceVersion": "14872", "creationTimestamp": "2024-01-15T10:30:00Z", "generation": int64(4),
				"labels":          map[string]any{"app": "web", "env": "prod", "replica-count": "3"},
				"annotations":     map[string]any{"orkestra.io/phase": "live", "bad": "x"},
				"ownerReferences": []any{map[string]any{"kind": "MyApp", "name": "blog"}},
			},
			"spec": map[string]any{"replicas": int64(3), "template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "app", "image": "nginx:1.25",
					"env":   []any{map[string]any{"name": "APP_ENV", "value": "production"}},
					"ports": []any{map[string]any{"containerPort": int64(8080)}}},
			}}}},
			"status": map[string]any{"observedGeneration": int64(4), "readyReplicas": int64(2), "availableReplicas": int64(2), "updatedReplicas": int64(3),
				"conditions": []any{
					map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."},
					map[string]any{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded", "message": "timed out"},
				}},
		}},
		"statefulSets": {{"metadata": map[string]any{"name": "db"}, "status": map[string]any{"currentRevision": "db-6d8f4b9c5", "updateRevision": "db-7a2c1d4f8"}}},
		"jobs":         {{"metadata": map[string]any{"name": "migrate"}, "status": map[string]any{"succeeded": int64(1), "failed": int64(0)}}},
		"cronJobs": {{"metadata": map[string]any{"name": "nightly"},
			"status": map[string]any{"active": []any{map[string]any{"name": "nightly-1"}}, "lastSuccessfulTime": "2026-05-19T10:00:00Z"}}},
		"hpa": {{"metadata": map[string]any{"name": "web"}, "spec": map[string]any{"maxReplicas": int64(10)},
			"status": map[string]any{"currentReplicas": int64(10), "desiredReplicas": int64(10), "conditions": []any{
				map[string]any{"type": "AbleToScale", "status": "True"},
				map[string]any{"type": "ScalingActive", "status": "True"},
				map[string]any{"type": "ScalingLimited", "status": "True"},
			}}}},
		"ingresses": {{"metadata": map[string]any{"name": "web"},
			"spec": map[string]any{"ingressClassName": "nginx",
				"rules": []any{map[string]any{"host": "api.example.com"}, map[string]any{}, map[string]any{"host": "www.example.com"}},
				"tls":   []any{map[string]any{"hosts": []any{"api.example.com", "www.example.com"}}}},
			"status": map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"hostname": "abc123.us-east-1.elb.amazonaws.com"}}}}}},
		"persistentVolumeClaims": {{"metadata": map[string]any{"name": "data"},
			"spec":   map[string]any{"accessModes": []any{"ReadWriteOnce"}, "storageClassName": "standard", "resources": map[string]any{"requests": map[string]any{"storage": "10Gi"}}},
			"status": map[string]any{"phase": "Bound"}}},
		"services": {{"metadata": map[string]any{"name": "web"},
			"spec":   map[string]any{"clusterIP": "10.96.0.1", "ports": []any{map[string]any{"port": int64(80), "nodePort": int64(31234)}}},
			"status": map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": "34.123.45.67"}}}}}},
		"secrets": nil,
	})
}

// catalogObject is the custom resource of the catalog tests: testObject
// with the provenance annotations upstream's gateway sets.
func catalogObject() map[string]any {
	o := testObject()
	o["metadata"].(map[string]any)["annotations"] = map[string]any{
		"orkestra.orkspace.io/serve-target": "smartapp", "orkestra.orkspace.io/serve-source": "github"}
	return o
}

// The functions of upstream's catalog this runtime gained. Expected values
// come from the catalog's documented examples (orkspace/orkestra
// pkg/note/catalog_generated.go) where it gives them, else by hand from the
// documented rule and the objects above.
func TestCatalogFunctions(t *testing.T) {
	cases := []struct{ src, want, err string }{
		// data
		{src: `{{ slugify "My Team / Platform" }}-operator`, want: "my-team-platform-operator"},
		{src: `{{ slugify "--Hello__World--" }}`, want: "hello-world"},
		{src: `{{ truncateName (slugify "My Team / Platform") 7 }}`, want: "my-team"},
		{src: `{{ truncateName "abc" 50 }}`, want: "abc"},
		{src: `{{ truncateName "abc" -1 }}`, err: "truncateName: negative length -1"},
		{src: `{{ sha256sum "hello" }}`, want: "2cf24dba"}, // SHA-256("hello") = 2cf24dba5fb0…
		{src: `{{ sha256sum "" }}`, want: "e3b0c442"},
		{src: `{{ repoSlug "myorg/payments-api" }}`, want: "payments-api"},
		{src: `{{ repoSlug "git@github.com:myorg/payments-api.git" }}`, want: "payments-api"},
		{src: `{{ repoSlug "https://github.com/myorg/payments-api" }}`, want: "payments-api"},
		{src: `{{ toBase64 "hello" }}`, want: "aGVsbG8="},
		{src: `{{ fromBase64 "aGVsbG8=" }}`, want: "hello"},
		{src: `{{ fromBase64 "not base64!" }}`, want: ""},
		{src: `{{ toJSON .spec.config }}`, want: `{"a":1,"b":"two"}`},
		{src: `{{ lookup "myorg/orders-api" "myorg/payments-api" "team-payments" "myorg/orders-api" "team-orders" }}`, want: "team-orders"},
		{src: `{{ lookup "other" "myorg/payments-api" "team-payments" }}`, want: ""},
		{src: `{{ lookup "x" "x" }}`, want: ""}, // a trailing unpaired argument is ignored
		{src: `{{ concat "*." .spec.domain }}`, want: "*.my.app.example.com"},
		{src: `{{ concat .metadata.name "-" .spec.environment }}`, want: "blog-production"},
		{src: `{{ domainBare "https://www.acme.com/" }}`, want: "acme.com"},
		{src: `{{ domainBare "www.acme.com" }}`, want: "acme.com"},
		{src: `{{ domainBare "acme.com" }}`, want: "acme.com"},
		// semver
		{src: `{{ semverMajor "1.2.3" }}.{{ semverMinor "1.2.3" }}.{{ semverPatch "1.2.3" }}`, want: "1.2.3"},
		{src: `{{ semverMajor "v2.0.0" }}`, want: "2"},
		{src: `{{ semverMajor "latest" }}`, want: ""},
		{src: `{{ semverValid "1.2.3" }} {{ semverValid "latest" }}`, want: "true false"},
		{src: `{{ semverCompare "1.2.3" "1.3.0" }} {{ semverCompare "2.0.0" "1.9.9" }} {{ semverCompare "bad" "1.0.0" }}`, want: "-1 1 0"},
		{src: `{{ semverBump "1.2.3" "patch" }} {{ semverBump "2.1.0-rc1" "patch" }}`, want: "1.2.4 2.1.1"},
		{src: `{{ semverBump "1.2.3" "minor" }} {{ semverBump "1.2.3" "MAJOR" }} {{ semverBump "1.2.3" "build" }}`, want: "1.3.0 2.0.0 1.2.3"},
		{src: `{{ semverConstraint "1.2.3" ">=1.0.0,<2.0.0" }} {{ semverConstraint "2.1.0" "^1.0" }}`, want: "true false"},
		// durations
		{src: `{{ durationSeconds "5m" }} {{ durationSeconds "1h30m" }} {{ durationSeconds "7d" }} {{ durationSeconds "soon" }}`, want: "300 5400 604800 0"},
		{src: `{{ durationAdd "5m" "30s" }} {{ durationAdd "1h" "90m" }} {{ durationAdd "1d" "12h" }} {{ durationAdd "x" "1h" }}`, want: "5m30s 2h30m0s 36h0m0s 0s"},
		{src: `{{ durationValid "5m" }} {{ durationValid "5d" }} {{ durationValid "" }} {{ durationValid "soon" }}`, want: "true true false false"},
		{src: `{{ timeFormat "2026-04-13T10:00:00Z" "Jan 2, 2006" }}`, want: "Apr 13, 2026"},
		{src: `{{ timeFormat "2026-04-13" "2006-01-02" }}|{{ timeFormat "garbage" "2006" }}`, want: "2026-04-13|"},
		// validation
		{src: `{{ isValidEmail "team@myorg.io" }} {{ isValidEmail "Team <team@myorg.io>" }} {{ isValidEmail "not-an-email" }}`, want: "true false false"},
		{src: `{{ isValidGitRepository "https://github.com/myorg/payments" }} {{ isValidGitRepository "git@github.com:myorg/payments.git" }} {{ isValidGitRepository "not a repo" }}`, want: "true true false"},
		{src: `{{ isValidURL "https://example.com/webhook" }} {{ isValidURL "ftp://example.com" }} {{ isValidURL "not a url" }}`, want: "true false false"},
		{src: `{{ isValidImageRef "myorg/app:v1.2.3" }} {{ isValidImageRef "registry.myorg.io:5000/team/app:latest" }} {{ isValidImageRef "MyOrg/App" }}`, want: "true true false"},
		{src: `{{ isValidJSON "{\"app\": \"payments-api\"}" }} {{ isValidJSON "{not json" }}`, want: "true false"},
		{src: `{{ isValidPort "8080" }} {{ isValidPort "0" }} {{ isValidPort "70000" }}`, want: "true false false"},
		{src: `{{ isDNS1123Subdomain "my-app.example.com" }} {{ isDNS1123Subdomain "My_App" }} {{ isDNS1123Subdomain "" }}`, want: "true false false"},
		{src: `{{ isValidLabelKey "tier" }} {{ isValidLabelKey "platform.myorg.io/tier" }} {{ isValidLabelKey "bad key" }}`, want: "true true false"},
		{src: `{{ isValidAnnotationKey "platform.myorg.io/jira-ticket" }} {{ isValidAnnotationKey "bad key" }}`, want: "true false"},
		{src: `{{ isValidLabelValue "team-payments" }} {{ isValidLabelValue "" }} {{ isValidLabelValue "team payments" }} {{ isValidLabelValue "-leading-dash" }}`, want: "true true false false"},
		{src: `{{ cidrContains "10.0.0.0/8" "10.1.2.3" }} {{ cidrContains "192.168.0.0/16" "10.0.0.1" }} {{ cidrContains "bad-cidr" "10.0.0.1" }}`, want: "true false false"},
		{src: `{{ ipIsPrivate "10.0.0.1" }} {{ ipIsPrivate "192.168.1.100" }} {{ ipIsPrivate "172.20.0.5" }} {{ ipIsPrivate "8.8.8.8" }} {{ ipIsPrivate "2001:db8::1" }}`, want: "true true true false false"},
		{src: `{{ ipValid "10.0.0.1" }} {{ ipValid "2001:db8::1" }} {{ ipValid "not-an-ip" }} {{ ipValid "" }}`, want: "true true false false"},
		// quantity
		{src: `{{ parseQuantity "100m" }} {{ parseQuantity "500m" }} {{ parseQuantity "2" }}`, want: "0.1 0.5 2"},
		{src: `{{ parseQuantity "lots" }}`, err: `parseQuantity: "lots" is not a Kubernetes quantity`},
		{src: `{{ formatQuantity 0.1 }} {{ formatQuantity 0.5 }} {{ formatQuantity 1.0 }} {{ formatQuantity 1073741824 }}`, want: "100m 500m 1 1Gi"},
		{src: `{{ formatQuantity (parseQuantity "1Gi") }}`, want: "1Gi"},
		{src: `{{ formatQuantity (div (parseQuantity "1") 4) }}`, want: "250m"},
		{src: `{{ sumQuantity "100m" "200m" }} {{ sumQuantity "500m" "500m" }} {{ sumQuantity "1Gi" "512Mi" }}`, want: "300m 1 1536Mi"},
		{src: `{{ subtractQuantity "1Gi" "512Mi" }} {{ subtractQuantity "500m" "500m" }} {{ subtractQuantity "100m" "200m" }}`, want: "512Mi 0 -100m"},
		// conditional, cron, types
		{src: `{{ eqTernary "true" "true" "ready" "waiting" }} {{ eqTernary .spec.environment "staging" "strict" "permissive" }}`, want: "ready permissive"},
		{src: `{{ eqTernary .spec.enabled "true" "on" "off" }} {{ eqTernary .spec.missing "" "none" "some" }}`, want: "on none"},
		{src: `{{ cronField .spec.schedule 0 }} {{ cronField "0 0 1 6 *" 3 }}`, want: "*/5 6"},
		{src: `{{ cronField "* * * * *" 5 }}`, err: "cronField: index 5 is not 0 to 4"},
		{src: `{{ typeString .spec.image }} {{ typeString .spec.replicas }} {{ typeNumber .spec.replicas }} {{ typeNumber .spec.ratio }}`, want: "true false true true"},
		{src: `{{ typeBool .spec.enabled }} {{ typeList .spec.tags }} {{ typeList .spec.image }} {{ typeNull .spec.missing }} {{ typeNull .spec.image }}`, want: "true true false true false"},
		{src: `{{ len (toList "a, b, c") }} {{ index (toList " a , b") 1 }} {{ len (toList "") }}`, want: "3 b 0"},
		// collections
		{src: `{{ listGet .spec.tags 0 }}|{{ listGet .spec.tags 5 }}`, want: "a|"},
		{src: `{{ listHas .spec.tags "a" }} {{ listHas .spec.tags "z" }} {{ listLen .spec.tags }} {{ listLen .spec.image }}`, want: "true false 2 0"},
		{src: `{{ mapGet .metadata.labels "app" }}|{{ mapGet .metadata.labels "nope" }}`, want: "blog|"},
		{src: `{{ join (mapKeys .metadata.labels) ", " }} {{ len (mapValues .spec.config) }}`, want: "app, tier 2"},
		{src: `{{ asString .spec.config }} {{ asString .spec.replicas }}`, want: `{"a":1,"b":"two"} 3`},
		{src: `{{ listGet (asList "[\"us-east-1\", \"eu-west-1\"]") 1 }} {{ len (asList .spec.image) }} {{ len (asList .spec.tags) }}`, want: "eu-west-1 0 2"},
		{src: `{{ mapGet (asMap "{\"a\": \"b\"}") "a" }} {{ len (asMap .spec.image) }}`, want: "b 0"},
		// an object's metadata, status and conditions
		{src: `{{ resourceName .children.deployment }} {{ resourceNamespace .children.deployment }} {{ resourceVersion .children.deployment }}`, want: "web prod-ns 14872"},
		{src: `{{ resourceUID .children.deployment }} {{ creationTimestamp .children.deployment }}`, want: "4b3f8d21-8e3a-4f8c-b9d2-1a2b3c4d5e6f 2024-01-15T10:30:00Z"},
		{src: `{{ generation .children.deployment }} {{ observedGeneration .children.deployment }} {{ isSynced .children.deployment }} {{ isTerminating .children.deployment }}`, want: "4 4 true false"},
		{src: `{{ ownerKind .children.deployment }}/{{ ownerName .children.deployment }}|{{ ownerKind .children.job }}`, want: "MyApp/blog|"},
		{src: `{{ getLabel .children.deployment "app" }}|{{ getLabel .children.deployment "nope" }}|{{ getLabelInt .children.deployment "replica-count" }}`, want: "web||3"},
		{src: `{{ getAnnotation .children.deployment "orkestra.io/phase" }} {{ getAnnotationInt .children.deployment "bad" }} {{ getAnnotation . "autoscale/min-replicas" | default "2" }}`, want: "live 0 2"},
		{src: `{{ hasLabel .children.deployment "env" }} {{ hasAnnotation .children.deployment "missing" }}`, want: "true false"},
		{src: `{{ labelMatches .children.deployment "app" "web" "env" "prod" }} {{ labelMatches .children.deployment "env" "dev" }}`, want: "true false"},
		{src: `{{ hasCondition .children.deployment "Available" }} {{ hasCondition .children.deployment "Progressing" }}`, want: "true false"},
		{src: `{{ conditionReason .children.deployment "Available" }}|{{ conditionMessage .children.deployment "Progressing" }}|{{ conditionReason .children.deployment "Nope" }}`, want: "MinimumReplicasAvailable|timed out|"},
		{src: `{{ getStatus .children.deployment "readyReplicas" }}|{{ getStatus .children.deployment "conditions" }}|{{ hasStatus .children.deployment "readyReplicas" }} {{ hasStatus .children.deployment "nope" }}`, want: "2||true false"},
		{src: `{{ mapGet (labels .children.deployment) "app" }} {{ len (annotations .children.secret) }} {{ mapGet (meta .children.deployment) "resourceVersion" }}`, want: "web 0 14872"},
		{src: `{{ mapGet (spec .children.deployment) "replicas" }} {{ mapGet (status .children.deployment) "readyReplicas" }}`, want: "3 2"},
		// workloads
		{src: `{{ availableReplicas .children.deployment }} {{ updatedReplicas .children.deployment }} {{ desiredReplicas .children.deployment }} {{ rolloutComplete .children.deployment }}`, want: "2 3 3 true"},
		{src: `{{ desiredReplicas .children.secret }}`, want: "1"}, // a kind without a child yet: the default
		{src: `{{ containerImage .children.deployment 0 }}|{{ containerImage .children.deployment 1 }}|{{ containerEnv .children.deployment 0 "APP_ENV" }}`, want: "nginx:1.25||production"},
		{src: `{{ containerPort .children.deployment 0 8080 }} {{ containerPort .children.deployment 0 9090 }}`, want: "true false"},
		{src: `{{ statefulSetCurrentRevision .children.statefulset }} {{ statefulSetUpdateRevision .children.statefulset }}`, want: "db-6d8f4b9c5 db-7a2c1d4f8"},
		{src: `{{ jobSucceeded .children.job }} {{ jobFailed .children.job }} {{ jobActive .children.job }}`, want: "true false false"},
		{src: `{{ cronJobActiveCount .children.cronjob }} {{ cronJobLastSuccessTime .children.cronjob }}`, want: "1 2026-05-19T10:00:00Z"},
		{src: `{{ hpaMinReplicas .children.hpa }} {{ hpaMaxReplicas .children.hpa }} {{ hpaCurrentReplicas .children.hpa }} {{ hpaDesiredReplicas .children.hpa }} {{ hpaAtMax .children.hpa }}`, want: "1 10 10 10 true"},
		{src: `{{ hpaAbleToScale .children.hpa }} {{ hpaScalingActive .children.hpa }} {{ hpaScalingLimited .children.hpa }} {{ hpaScaling .children.hpa }}`, want: "true true true false"},
		// Services, Ingresses, PVCs
		{src: `{{ serviceClusterIP .children.service }} {{ serviceLoadBalancerIP .children.service }}|{{ serviceLoadBalancerHost .children.service }}|{{ serviceNodePort .children.service }}`, want: "10.96.0.1 34.123.45.67||31234"},
		{src: `{{ ingressClassName .children.ingress }} {{ ingressHost .children.ingress }}|{{ ingressIP .children.ingress }}|{{ ingressReady .children.ingress }}`, want: "nginx abc123.us-east-1.elb.amazonaws.com||true"},
		{src: `{{ ingressRules .children.ingress }}|{{ ingressTLSHosts .children.ingress }}`, want: "api.example.com, www.example.com|api.example.com, www.example.com"},
		{src: `{{ pvcAccessModes .children.pvc }} {{ pvcBound .children.pvc }} {{ pvcCapacity .children.pvc }} {{ pvcPhase .children.pvc }} {{ pvcStorageClass .children.pvc }}`, want: "ReadWriteOnce true 10Gi Bound standard"},
		// the serve gateway's provenance annotations
		{src: `{{ getServeTarget . }}|{{ getServeAlias . }}|{{ getServeSource . }}`, want: "smartapp||github"},
		{src: `{{ hasServeTarget . }} {{ hasServeAlias . }} {{ hasServeSource . }} {{ isDirectApply . }} {{ isDirectApply .children.deployment }}`, want: "true false true false true"},
	}
	s := engine.NewScope(catalogObject())
	s.Children = catalogChildren()
	for _, tc := range cases {
		got, err := renderScope(t, tc.src, s)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.src, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.src, err)
		case got != tc.want:
			t.Errorf("%s = %q, want %q", tc.src, got, tc.want)
		}
	}
}

// The clock functions gained: weekend, timeNotInWindow, isExpired (upstream
// pkg/note/time.go), at fixed instants in UTC.
func TestCatalogClockFunctions(t *testing.T) {
	cases := []struct{ now, src, want string }{
		{"2026-07-18T14:30:00Z", `{{ weekend }}`, "true"}, // a Saturday
		{"2026-07-19T23:59:00Z", `{{ weekend }}`, "true"}, // a Sunday
		{"2026-07-14T14:30:00Z", `{{ weekend }}`, "false"},
		{"2026-07-14T14:30:00Z", `{{ timeNotInWindow "09:00" "18:00" }}`, "false"},
		{"2026-07-14T22:00:00Z", `{{ timeNotInWindow "09:00" "18:00" }}`, "true"},
		{"2026-07-14T03:00:00Z", `{{ timeNotInWindow "02:00" "04:00" }}`, "false"},
		{"2026-07-14T10:00:00Z", `{{ isExpired "2026-07-01T00:00:00Z" "7d" }}`, "true"},
		{"2026-07-14T10:00:00Z", `{{ isExpired "2026-07-10T00:00:00Z" "7d" }}`, "false"},
		{"2026-07-14T10:00:00Z", `{{ isExpired "2026-07-14T09:00:00Z" "30m" }}`, "true"},
		{"2026-07-14T10:00:00Z", `{{ isExpired "garbage" "1d" }} {{ isExpired "2026-07-01T00:00:00Z" "soon" }}`, "false false"},
	}
	for _, tc := range cases {
		at, err := time.Parse(time.RFC3339, tc.now)
		if err != nil {
			t.Fatal(err)
		}
		restore := engine.SetClock(func() time.Time { return at })
		got, err := render(t, tc.src, testObject())
		restore()
		if err != nil || got != tc.want {
			t.Errorf("at %s %s = %q, %v; want %q", tc.now, tc.src, got, err, tc.want)
		}
	}
}

// A refused function is a load error at the call's position naming it, the
// reason and what to write instead.
func TestCatalogRefusedAtLoad(t *testing.T) {
	got := compileErrs(t, `zone: {{ podNodeZone .children.pod }}`, testCtx(t))
	for _, want := range []string{"k.yaml:10:", "[things] spec.x:", "podNodeZone is a function of the original engine that this runtime does not implement",
		"the pod's node (_node)", "enrich: [node] is refused at load; it collects pods only", "read the children the katalog declares"} {
		if !strings.Contains(got, want) {
			t.Errorf("got %q, want it to contain %q", got, want)
		}
	}
}

const catalogCELObj = `
spec:
  name: "My Team / Platform"
  child:
    metadata:
      name: web
      generation: 4
      labels: {app: web, env: prod, replica-count: "3"}
      annotations: {orkestra.orkspace.io/serve-target: smartapp}
      ownerReferences: [{kind: MyApp, name: blog}]
    spec:
      replicas: 3
      maxReplicas: 3
      template: {spec: {containers: [{name: app, image: "nginx:1.25", env: [{name: APP_ENV, value: production}], ports: [{containerPort: 8080}]}]}}
    status:
      observedGeneration: 4
      updatedReplicas: 3
      currentReplicas: 3
      desiredReplicas: 2
      conditions:
        - {type: Available, status: "True", reason: MinimumReplicasAvailable}
        - {type: ScalingActive, status: "True"}
      loadBalancer: {ingress: [{ip: 34.123.45.67}]}
`

// The CEL counterparts give the legacy functions' results (the same
// expected values as TestCatalogFunctions, derived from upstream's
// catalog).
func TestCatalogCELCounterparts(t *testing.T) {
	trSetup(t)
	self := schemaOf(t, upstreamSchema)
	obj := objectOf(t, catalogCELObj)
	cases := []struct {
		src  string
		want any
		err  string
	}{
		{src: "${slugify(self.spec.name)}", want: "my-team-platform"},
		{src: "${truncateName(slugify(self.spec.name), 7)}", want: "my-team"},
		{src: "${truncateName('abc', -1)}", err: "truncateName: negative length -1"},
		{src: "${sha256sum('hello')}", want: "2cf24dba"},
		{src: "${repoSlug('git@github.com:myorg/payments-api.git')}", want: "payments-api"},
		{src: "${toBase64('hello')}", want: "aGVsbG8="},
		{src: "${fromBase64('aGVsbG8=')}", want: "hello"},
		{src: "${toJSON(self.spec.child.spec.template.spec.containers[0].ports)}", want: `[{"containerPort":8080}]`},
		{src: "${domainBare('https://www.acme.com/')}", want: "acme.com"},
		{src: "${semverBump('2.1.0-rc1', 'patch')}", want: "2.1.1"},
		{src: "${semverCompare('1.2.3', '1.3.0')}", want: int64(-1)},
		{src: "${semverConstraint('1.2.3', '>=1.0.0,<2.0.0')}", want: true},
		{src: "${semverMajor('v2.0.0')}", want: "2"},
		{src: "${durationSeconds('7d')}", want: int64(604800)},
		{src: "${durationAdd('1d', '12h')}", want: "36h0m0s"},
		{src: "${timeFormat('2026-04-13T10:00:00Z', 'Jan 2, 2006')}", want: "Apr 13, 2026"},
		{src: "${isValidImageRef('MyOrg/App')}", want: false},
		{src: "${isValidLabelValue('-leading-dash')}", want: false},
		{src: "${cidrContains('10.0.0.0/8', '10.1.2.3')}", want: true},
		{src: "${ipIsPrivate('172.20.0.5')}", want: true},
		{src: "${parseQuantity('100m')}", want: 0.1},
		{src: "${formatQuantity(0.25)}", want: "250m"},
		{src: "${sumQuantity('1Gi', '512Mi')}", want: "1536Mi"},
		{src: "${subtractQuantity('100m', '200m')}", want: "-100m"},
		{src: "${parseQuantity('lots')}", err: `parseQuantity: "lots" is not a Kubernetes quantity`},
		{src: "${cronField('0 0 1 6 *', 3)}", want: "6"},
		{src: "${typeOf(self.spec.child.spec.replicas)}", want: "number"},
		{src: "${size(toList('a, b, c'))}", want: int64(3)},
		{src: "${listLen(self.spec.child.status.conditions)}", want: int64(2)},
		{src: "${mapKeys(self.spec.child.metadata.labels)[0]}", want: "app"},
		{src: "${getIntOr(self.spec.child.spec.replicas, 1)}", want: int64(3)},
		{src: "${repeat('ha', 3)}", want: "hahaha"},
		{src: "${truncate('abcdefgh', 6)}", want: "abc..."},
		{src: "${resourceName(self.spec.child)}", want: "web"},
		{src: "${isSynced(self.spec.child)}", want: true},
		{src: "${ownerKind(self.spec.child)}", want: "MyApp"},
		{src: "${getLabelInt(self.spec.child, 'replica-count')}", want: int64(3)},
		{src: "${labelMatches(self.spec.child, 'app', 'web', 'env', 'prod')}", want: true},
		{src: "${labelMatches(self.spec.child, 'env', 'dev')}", want: false},
		{src: "${conditionReason(self.spec.child, 'Available')}", want: "MinimumReplicasAvailable"},
		{src: "${getStatus(self.spec.child, 'updatedReplicas')}", want: "3"},
		{src: "${labels(self.spec.child)['env']}", want: "prod"},
		{src: "${rolloutComplete(self.spec.child)}", want: true},
		{src: "${containerEnv(self.spec.child, 0, 'APP_ENV')}", want: "production"},
		{src: "${containerPort(self.spec.child, 0, 8080)}", want: true},
		{src: "${hpaAtMax(self.spec.child)}", want: true},
		{src: "${hpaScaling(self.spec.child)}", want: true}, // ScalingActive and 3 ≠ 2
		{src: "${serviceLoadBalancerIP(self.spec.child)}", want: "34.123.45.67"},
		{src: "${getServeTarget(self.spec.child)}", want: "smartapp"},
		{src: "${isDirectApply(self.spec.child)}", want: false},
	}
	s := engine.NewScope(obj)
	for _, tc := range cases {
		e, diags := trCEL.CompileValue(tc.src, &engine.Context{Field: "x", Pos: testPos, Self: self})
		if diags.HasErrors() {
			t.Errorf("%s: %v", tc.src, diags)
			continue
		}
		got, err := e.Eval(s)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.src, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.src, err)
		case got != tc.want:
			t.Errorf("%s = %#v, want %#v", tc.src, got, tc.want)
		}
	}
}

// weekend changes at midnight, timeNotInWindow at the window's edges,
// isExpired once, when its literal timestamp plus duration passes (every
// minute when they come from the object).
func TestCatalogClockTimers(t *testing.T) {
	now := time.Date(2026, 7, 14, 14, 30, 0, 0, time.UTC)
	cases := []struct {
		src  string
		want time.Time
	}{
		{`{{ weekend }}`, time.Date(2026, 7, 15, 0, 0, 0, 0, time.UTC)},
		{`{{ timeNotInWindow "09:00" "18:00" }}`, time.Date(2026, 7, 14, 18, 0, 0, 0, time.UTC)},
		{`{{ isExpired "2026-07-20T00:00:00Z" "1d" }}`, time.Date(2026, 7, 21, 0, 0, 0, 0, time.UTC)},
		{`{{ isExpired "2026-07-01T00:00:00Z" "1d" }}`, time.Time{}}, // expired: it no longer changes
		{`{{ isExpired .spec.image "1d" }}`, time.Date(2026, 7, 14, 14, 31, 0, 0, time.UTC)},
	}
	for _, tc := range cases {
		e, diags := New(nil).CompileValue(tc.src, testCtx(t))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		tm := e.(*Template)
		if got := tm.NextChange(now); !got.Equal(tc.want) || !tm.ReadsClock() {
			t.Errorf("%s: next change %v (timed %v), want %v", tc.src, got, tm.ReadsClock(), tc.want)
		}
	}
}

// A string a counterpart reads from an object is estimated at the object's
// size (an annotation or a condition message can be large), so work over it
// is counted; over a bounded string it stays cheap.
func TestCatalogCELCost(t *testing.T) {
	trSetup(t)
	self := schemaOf(t, upstreamSchema)
	for src, ok := range map[string]bool{
		"${slugify(self.spec.name)}":                                          true,
		"${getLabel(self.spec.child, 'app') == 'web'}":                        true,
		"${getAnnotation(self.spec.child, 'list').split(',').size()}":         false,
		"${conditionMessage(self.spec.child, 'Ready').split(' ').size() > 1}": false,
	} {
		_, diags := trCEL.CompileValue(src, &engine.Context{Field: "x", Pos: testPos, Self: self, CostLimit: 100})
		if diags.HasErrors() == ok || !ok && !strings.Contains(diags.Error(), "estimated cost") {
			t.Errorf("%s: %v", src, diags)
		}
	}
}
