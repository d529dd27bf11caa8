package katalog

import (
	"strings"
	"testing"
	"time"

	"github.com/orkspace/orkestra-cel/katalogapi"
)

// A cross read with source: (upstream's ONCOP, orkspace/orkestra
// pkg/types/cross.go and cross_oncop.go): host and protocol (older: type)
// name a route of another runtime's /katalog API, endpoint any URL; auth,
// cacheFor and this runtime's bounds decode as an external call's.
func TestCrossSourceDecodes(t *testing.T) {
	k, _, diags := loadBox(t, `
cross:
  - crd: loader
    selector: {name: my-loader, namespace: default}
    source: {host: "http://loader.loader-system:8080", type: cr, cacheFor: 10s, auth: {token: $LOADER_TOKEN}}
    as: loaderCR
  - as: feed
    source:
      endpoint: "https://metrics.example.com/q/{{ .metadata.name }}"
      timeout: 2s
      maxBytes: 4096
      continueOnError: false
      auth: {secretRef: {name: feed-token, key: t}}
      schema: {type: object, properties: {depth: {type: integer}}}
`)
	var errs []string
	for _, d := range diags {
		if !strings.Contains(d, "no schema for") && !strings.Contains(d, "warning:") {
			errs = append(errs, d)
		}
	}
	if len(errs) > 0 {
		t.Fatalf("diagnostics:\n%s", strings.Join(errs, "\n"))
	}
	obs := k.CRDs[0].Box.Observations
	cr, feed := obs[0].Remote, obs[1].Remote
	if cr == nil || cr.Host != "http://loader.loader-system:8080" || cr.Protocol != katalogapi.RouteCR || cr.CacheFor != 10*time.Second || cr.TokenEnv != "LOADER_TOKEN" || !cr.Typed() || cr.FailReconcile {
		t.Errorf("host read decoded as %+v", cr)
	}
	if obs[0].Entry != "loader" || obs[0].Name == nil || obs[0].Name.Str != "my-loader" || obs[0].Resolved {
		t.Errorf("a remote read keeps its crd and selector and resolves no kind: %+v", obs[0])
	}
	if feed == nil || feed.Endpoint == nil || feed.Timeout != 2*time.Second || feed.MaxBytes != 4096 || !feed.FailReconcile ||
		feed.Auth == nil || feed.Auth.Secret != "feed-token" || feed.Auth.Key != "t" || feed.Schema == nil || !feed.Typed() || feed.CacheFor != DefaultExternalCacheFor {
		t.Errorf("endpoint read decoded as %+v", feed)
	}
}

// Every misuse of source: is a load error (or a warning, where nothing
// observable changes) at the key at fault. Box lines start at line 15,
// column 9.
func TestCrossSourceLoadErrors(t *testing.T) {
	cases := []struct {
		name, box string
		want      []string
	}{
		{"neither endpoint nor host", "cross:\n  - crd: loader\n    source: {cacheFor: 10s}\n",
			[]string{`17:13: [site] operatorBox.cross[0].source: source needs endpoint: (a URL answering JSON) or host: (another Orkestra runtime, whose /katalog API the read asks)`}},
		{"host is a base URL", "cross:\n  - crd: loader\n    source: {host: 'loader:8080/katalog'}\n",
			[]string{`17:28: [site] operatorBox.cross[0].source.host: host "loader:8080/katalog" is not a base URL (http://host:port, no path)`}},
		{"host is a literal", "cross:\n  - crd: loader\n    source: {host: 'http://{{ .spec.host }}'}\n",
			[]string{`17:28: [site] operatorBox.cross[0].source.host: host is a literal base URL`}},
		{"unknown protocol", "cross:\n  - crd: loader\n    source: {host: 'http://l:8080', protocol: healt}\n",
			[]string{`17:55: [site] operatorBox.cross[0].source.protocol: protocol "healt" is not one of info, metrics, health, cr, events; did you mean "health"?`}},
		{"protocol and type", "cross:\n  - crd: loader\n    source: {host: 'http://l:8080', protocol: cr, type: cr}\n",
			[]string{`17:59: [site] operatorBox.cross[0].source.type: both protocol and its older name type are set; keep protocol`}},
		{"host needs crd", "cross:\n  - as: l\n    source: {host: 'http://l:8080'}\n",
			[]string{`17:13: [site] operatorBox.cross[0].source: source.host needs crd: naming the entry of the other runtime (its /katalog/{crd} routes)`}},
		{"the cr route needs a name", "cross:\n  - crd: loader\n    source: {host: 'http://l:8080', protocol: cr}\n",
			[]string{`17:13: [site] operatorBox.cross[0].selector.name: the cr route names one custom resource: give selector.name`,
				`17:13: warning: [site] operatorBox.cross[0].source: cross.loader.status and .children are read untyped`}},
		{"one answer, no labelSelector", "cross:\n  - crd: loader\n    selector: {labelSelector: 'a=b'}\n    source: {endpoint: 'http://l:8080/x'}\n",
			[]string{`17:39: [site] operatorBox.cross[0].selector.labelSelector: a cross read with source: reads one answer`,
				`18:13: warning: [site] operatorBox.cross[0].source: cross.loader is read untyped`}},
		{"one answer, no strategy all", "cross:\n  - crd: loader\n    strategy: all\n    source: {endpoint: 'http://l:8080/x', schema: {type: object}}\n",
			[]string{`16:13: [site] operatorBox.cross[0].strategy: strategy: all lists the objects an informer read matches`}},
		{"a token written into the katalog", "cross:\n  - crd: loader\n    source: {host: 'http://l:8080', auth: {token: s3cret}}\n",
			[]string{`17:59: [site] operatorBox.cross[0].source.auth.token: token: takes an environment variable of the operator, written $NAME`}},
		{"auth token and secretRef", "cross:\n  - crd: loader\n    source: {host: 'http://l:8080', auth: {token: $T, secretRef: {name: s}}}\n",
			[]string{`17:52: [site] operatorBox.cross[0].source.auth.token: auth takes token or secretRef, not both`}},
		{"schema of a host route", "cross:\n  - crd: loader\n    source: {host: 'http://l:8080', schema: {type: object}}\n",
			[]string{`17:45: [site] operatorBox.cross[0].source.schema: schema types an endpoint's answer; the info route of host: answers with its own type`}},
		{"the answer is an object", "cross:\n  - as: feed\n    source: {endpoint: 'http://l/x', schema: {type: array, items: {type: string}}}\n",
			[]string{`17:54: [site] operatorBox.cross[0].source.schema: schema is not structural (every field needs a type, as in a CRD): type: Invalid value: "array": must be object at the root`,
				`17:13: warning: [site] operatorBox.cross[0].source: cross.feed is read untyped`}},
		{"retries bounded", "cross:\n  - crd: loader\n    source: {host: 'http://l:8080', retries: 11}\n",
			[]string{`17:54: [site] operatorBox.cross[0].source.retries: retries must be between 0 and 10, got 11`}},
		{"apiVersion and kind are this operator's", "cross:\n  - apiVersion: v1\n    kind: ConfigMap\n    as: c\n    source: {endpoint: 'http://l/x'}\n",
			[]string{`16:25: [site] operatorBox.cross[0]: a cross read with source: reads another runtime's entry, named by crd:`,
				`19:13: warning: [site] operatorBox.cross[0].source: cross.c is read untyped`}},
		{"endpoint wins over host", "cross:\n  - crd: loader\n    source: {endpoint: 'http://l/x', host: 'http://l:8080', schema: {type: object}}\n",
			[]string{`17:46: warning: [site] operatorBox.cross[0].source.host: host is not used: endpoint is called as written (as upstream); remove one of the two`}},
		{"an untyped endpoint is a warning", "cross:\n  - crd: loader\n    source: {endpoint: 'http://l/x'}\n",
			[]string{`17:13: warning: [site] operatorBox.cross[0].source: cross.loader is read untyped (any field, checked when evaluated): it is what endpoint http://l/x answers; declare the answer's OpenAPI schema under source.schema to type it`}},
		{"a selector an info read does not use", "cross:\n  - crd: loader\n    selector: {name: x}\n    source: {host: 'http://l:8080'}\n",
			[]string{`17:30: warning: [site] operatorBox.cross[0].selector: selector is not used: this read asks the info route of http://l:8080, which names no custom resource`}},
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
