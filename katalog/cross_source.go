package katalog

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/katalogapi"
)

// Remote cross reads: a cross read with source: reads what another process
// answers over HTTP instead of this operator's informers (upstream's ONCOP,
// pkg/types/cross.go and cross_oncop.go; read in pkg/reconciler/
// run_template_reconcile.go readCross). source.host names another Orkestra
// runtime and protocol the route of its /katalog API (crd: names the entry
// there); source.endpoint is any URL answering JSON. The answer, decoded,
// is what cross.<as> reads. Calls go through the operator's external client,
// so they are bounded, guarded and cached as external calls are.

// CrossSource is a cross read's source:.
type CrossSource struct {
	Pos Pos
	// Endpoint is the URL as written (it may be an expression of the custom
	// resource); nil when Host builds it.
	Endpoint *Value
	// Host is the base URL of another Orkestra runtime; Protocol the route
	// of its /katalog API the read asks (default info).
	Host     string
	Protocol katalogapi.Route
	// Namespace, when set, names the custom resource's namespace in the
	// per-object routes instead of the selector's (an expression or a
	// literal).
	Namespace *Value
	// TokenEnv names the operator's environment variable holding a bearer
	// token (auth.token: $NAME, or upstream's older source.token); Auth
	// reads it from a Secret instead.
	TokenEnv string
	Auth     *ExternalAuth
	Timeout  time.Duration
	CacheFor time.Duration
	Retries  int
	MaxBytes int64
	// Schema types an endpoint's JSON answer (a host's route has its own
	// type); nil: the answer is read untyped.
	Schema     *structuralschema.Structural
	JSONSchema *apiextensionsv1.JSONSchemaProps
	// FailReconcile: a read that fails (no answer, an error status, not
	// JSON, …) fails the reconcile (continueOnError: false); by default it
	// reads as not found, as upstream's, with a Warning event.
	FailReconcile bool
}

// Typed reports whether the answer has a known type: a host's route, or an
// endpoint with a schema.
func (s *CrossSource) Typed() bool { return s.Endpoint == nil || s.Schema != nil }

var (
	crossSourceKeys = []string{"endpoint", "host", "protocol", "type", "namespace", "auth", "token", "cacheFor", "timeout", "retries", "maxBytes", "schema", "continueOnError"}
	crossAuthKeys   = []string{"token", "secretRef", "scheme"}
)

// crossSource decodes a cross read's source:.
func (d *decoder) crossSource(f field, path string) *CrossSource {
	o := d.mapping(f.value, path, crossSourceKeys, nil)
	s := &CrossSource{Pos: d.pos(f.key), Protocol: katalogapi.RouteInfo, Timeout: DefaultExternalTimeout, CacheFor: DefaultExternalCacheFor, Retries: DefaultExternalRetries, MaxBytes: DefaultExternalMaxBytes}
	if ep, ok := o["endpoint"]; ok {
		s.Endpoint = d.stringValue(ep.value, path+".endpoint")
	}
	if h, ok := o["host"]; ok {
		s.Host = d.str(h.value, path+".host")
		switch {
		case s.Endpoint != nil:
			d.warnf(h.key, path+".host", "host is not used: endpoint is called as written (as upstream); remove one of the two")
			s.Host = ""
		case strings.Contains(s.Host, "{{") || strings.Contains(s.Host, "${"):
			d.errorf(h.value, path+".host", "host is a literal base URL (http://orkestra.loader-system:8080); to compute the URL, write it whole as endpoint:")
		default:
			if u, err := url.Parse(s.Host); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
				d.errorf(h.value, path+".host", "host %q is not a base URL (http://host:port, no path): the runtime's /katalog routes are built below it", s.Host)
			}
		}
	}
	if s.Endpoint == nil && !o.has("host") {
		d.errorf(f.key, path, "source needs endpoint: (a URL answering JSON) or host: (another Orkestra runtime, whose /katalog API the read asks)")
	}
	d.crossProtocol(s, o, path)
	if n, ok := o["namespace"]; ok {
		s.Namespace = d.stringValue(n.value, path+".namespace")
		if !s.Protocol.PerObject() || s.Endpoint != nil {
			d.warnf(n.key, path+".namespace", "namespace is not used: it names the custom resource in the cr and events routes of host:, and this read asks %s", s.describe())
		}
	}
	d.crossAuth(s, o, path)
	s.Timeout = d.durationKey(o, "timeout", path, s.Timeout, 10*time.Minute)
	s.CacheFor = d.durationKey(o, "cacheFor", path, s.CacheFor, 24*time.Hour)
	d.callLimits(o, path, &s.Retries, &s.MaxBytes)
	if sc, ok := o["schema"]; ok {
		if s.Endpoint == nil {
			d.errorf(sc.key, path+".schema", "schema types an endpoint's answer; the %s route of host: answers with its own type", s.Protocol)
		} else {
			// A structural schema is an object at its root, as the answer
			// must be (cross.<as>.<field>).
			s.JSONSchema, s.Schema = d.bodySchema(sc.value, path+".schema")
		}
	}
	if c, ok := o["continueOnError"]; ok {
		s.FailReconcile = !d.boolean(c.value, path+".continueOnError")
	}
	return s
}

// crossProtocol decodes protocol (older: type), the route of host: asked.
func (d *decoder) crossProtocol(s *CrossSource, o object, path string) {
	key := "protocol"
	p, ok := o[key]
	if t, older := o["type"]; older {
		if ok {
			d.errorf(t.key, path+".type", "both protocol and its older name type are set; keep protocol")
			return
		}
		key, p, ok = "type", t, true
	}
	if !ok {
		return
	}
	v := d.str(p.value, path+"."+key)
	names := make([]string, len(katalogapi.Routes))
	for i, r := range katalogapi.Routes {
		names[i] = string(r)
	}
	switch {
	case !contains(names, v):
		d.errorf(p.value, path+"."+key, "%s %q is not one of %s%s", key, v, strings.Join(names, ", "), DidYouMean(v, names))
	case s.Endpoint != nil:
		d.warnf(p.key, path+"."+key, "%s is not used: endpoint is called as written (as upstream); it selects a route of host:", key)
	default:
		s.Protocol = katalogapi.Route(v)
	}
}

// crossAuth decodes auth: {token | secretRef} and upstream's older token:.
func (d *decoder) crossAuth(s *CrossSource, o object, path string) {
	envToken := func(n *yaml.Node, p string) {
		tok := d.str(n, p)
		if m := envName.FindStringSubmatch(tok); m != nil {
			s.TokenEnv = m[1]
			return
		}
		d.errorf(n, p, "token: takes an environment variable of the operator, written $NAME; a token written into the katalog is readable by anyone who can read the katalog — put it in a Secret and use auth: {secretRef: {name: …, key: …}}")
	}
	if t, ok := o["token"]; ok {
		envToken(t.value, path+".token")
	}
	a, ok := o["auth"]
	if !ok {
		return
	}
	if s.TokenEnv != "" {
		d.errorf(a.key, path+".auth", "token and auth both set a credential; keep one")
		return
	}
	ao := d.mapping(a.value, path+".auth", crossAuthKeys, nil)
	if t, ok := ao["token"]; ok {
		if ao.has("secretRef") {
			d.errorf(t.key, path+".auth.token", "auth takes token or secretRef, not both")
			return
		}
		envToken(t.value, path+".auth.token")
		return
	}
	s.Auth = d.externalAuth(a, path+".auth")
}

// describe names what the read asks, for messages.
func (s *CrossSource) describe() string {
	if s.Endpoint != nil {
		return "endpoint " + s.Endpoint.Str
	}
	return fmt.Sprintf("the %s route of %s", s.Protocol, s.Host)
}

// checkRemote validates a cross read served by its source: what the
// selector, strategy and target mean there. It runs once the read is known
// to name no entry of this katalog.
func (d *decoder) checkRemote(ob *Observation) {
	s := ob.Remote
	switch {
	case ob.APIVersion != "" || ob.Kind != "":
		d.errorAt(ob.TargetPos, ob.Field, "a cross read with source: reads another runtime's entry, named by crd: (its name in that runtime's katalog); apiVersion and kind name a kind this operator reads itself — remove source:, or write crd:")
	case s.Endpoint == nil && ob.Entry == "":
		d.errorAt(s.Pos, ob.Field+".source", "source.host needs crd: naming the entry of the other runtime (its /katalog/{crd} routes)")
	}
	if ob.LabelSelector != nil {
		d.errorAt(ob.LabelSelector.Pos, ob.Field+".selector.labelSelector", "a cross read with source: reads one answer; labelSelector selects objects of this operator's informers — name the object with selector.name")
	}
	if ob.All {
		d.errorAt(ob.Pos, ob.Field+".strategy", "strategy: all lists the objects an informer read matches; a cross read with source: reads one answer")
	}
	if s.Endpoint == nil && s.Protocol.PerObject() && ob.Name == nil {
		d.errorAt(s.Pos, ob.Field+".selector.name", "the %s route names one custom resource: give selector.name (and selector.namespace, default the custom resource's)", s.Protocol)
	}
	if (s.Endpoint != nil || !s.Protocol.PerObject()) && ob.Name != nil {
		d.warnAt(ob.Name.Pos, ob.Field+".selector", "selector is not used: this read asks %s, which names no custom resource", s.describe())
	}
	switch {
	case s.Endpoint != nil && s.Schema == nil:
		d.warnAt(s.Pos, ob.Field+".source", "cross.%s is read untyped (any field, checked when evaluated): it is what %s answers; declare the answer's OpenAPI schema under source.schema to type it", ob.As, s.describe())
	case s.Endpoint == nil && s.Protocol == katalogapi.RouteCR:
		d.warnAt(s.Pos, ob.Field+".source", "cross.%s.status and .children are read untyped (checked when evaluated): the other runtime's CRD is not known here; its other fields are typed by the cr route's answer", ob.As)
	}
}
