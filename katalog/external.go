package katalog

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// External calls: HTTP requests a hook makes before its children are built,
// as upstream declares them (pkg/types/external.go, pkg/reconciler/
// run_external.go): the results read as .external.<name>.called, .status,
// .body and .error. This runtime bounds every call (timeout, response size,
// a per-resource cache, retries) and checks where it goes at every call
// (the operator's external package).

// ExternalCall is one declared HTTP call.
type ExternalCall struct {
	Pos Pos
	// Field is where it is declared, e.g. operatorBox.onReconcile.external[0].
	Field string
	// Hook declares it (its calls run when the hook renders).
	Hook    string
	Name    string
	NamePos Pos
	// URL, Body and the Headers' values may be expressions of the custom
	// resource (and of cross reads and earlier calls' results).
	URL     *Value
	Method  string
	Headers *Value
	Body    *Value
	// TokenEnv names an environment variable of the operator holding a
	// bearer token (upstream's token: "$NAME").
	TokenEnv string
	// Auth reads the credential from a Secret; nil when none.
	Auth *ExternalAuth
	// Timeout bounds one attempt (default DefaultExternalTimeout).
	Timeout time.Duration
	// ExpectedStatus: the only status that succeeds; 0: any below 400.
	ExpectedStatus int
	// ContinueOnError: a failed call does not fail the reconcile; its
	// result says why (upstream's continueOnError).
	ContinueOnError bool
	When, Or        *When
	// CacheFor is how long a result is reused for the same custom resource
	// and request (default DefaultExternalCacheFor).
	CacheFor time.Duration
	// Retries are further attempts after a connection error, 429 or 5xx
	// (default DefaultExternalRetries), with exponential backoff.
	Retries int
	// MaxBytes caps the response body (default DefaultExternalMaxBytes);
	// a larger body fails the call.
	MaxBytes int64
	// Schema types the response body decoded as JSON (external.<name>.json)
	// and makes a body that is not JSON, or does not match it, a failure;
	// nil: the body is decoded when it is JSON, untyped.
	Schema     *structuralschema.Structural
	JSONSchema *apiextensionsv1.JSONSchemaProps
	SchemaPos  Pos
}

// ExternalAuth sends a credential from a Secret of the custom resource's
// namespace (or Namespace).
type ExternalAuth struct {
	Pos       Pos
	Secret    string
	Key       string
	Namespace string
	// Scheme prefixes the Authorization header: Bearer (the default) or
	// Basic (the key holds user:password, base64-encoded on the way).
	Scheme string
}

// Defaults of an external call.
const (
	DefaultExternalTimeout  = 5 * time.Second
	DefaultExternalCacheFor = 30 * time.Second
	DefaultExternalRetries  = 2
	DefaultExternalMaxBytes = 1 << 20
	// MaxExternalMaxBytes is the largest response cap a call may declare.
	MaxExternalMaxBytes = 16 << 20
)

var (
	externalKeys     = []string{"name", "url", "method", "headers", "body", "token", "auth", "timeout", "expectedStatus", "continueOnError", "when", "or", "anyOf", "cacheFor", "retries", "maxBytes", "schema"}
	externalAuthKeys = []string{"secretRef", "scheme"}
	secretRefKeys    = []string{"name", "key", "namespace"}
	envName          = regexp.MustCompile(`^\$([A-Za-z_][A-Za-z0-9_]*)$`)
)

// external decodes a hook's external: list into box.External.
func (d *decoder) external(box *OperatorBox, hook string, n *yaml.Node, path string) {
	for i, item := range d.list(n, path) {
		ipath := fmt.Sprintf("%s[%d]", path, i)
		o := d.mapping(item, ipath, externalKeys, nil)
		c := &ExternalCall{Pos: d.pos(Resolve(item)), Field: ipath, Hook: hook, Method: http.MethodGet,
			Timeout: DefaultExternalTimeout, CacheFor: DefaultExternalCacheFor, Retries: DefaultExternalRetries, MaxBytes: DefaultExternalMaxBytes}
		if f, ok := o["name"]; ok {
			c.Name, c.NamePos = d.str(f.value, ipath+".name"), d.pos(f.value)
			if !validInputName(c.Name) {
				d.errorf(f.value, ipath+".name", "name %q is not a name expressions can read (letters, digits, _ and -, starting with a letter)", c.Name)
			}
		} else {
			d.errorf(Resolve(item), ipath, "an external call needs name: (its result reads as external.<name>)")
		}
		if f, ok := o["url"]; ok {
			c.URL = d.stringValue(f.value, ipath+".url")
		} else {
			d.errorf(Resolve(item), ipath, "an external call needs url:")
		}
		if f, ok := o["method"]; ok {
			c.Method = strings.ToUpper(d.str(f.value, ipath+".method"))
			switch c.Method {
			case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			default:
				d.errorf(f.value, ipath+".method", "method %q is not one of GET, HEAD, POST, PUT, PATCH, DELETE", c.Method)
			}
		}
		if f, ok := o["headers"]; ok {
			c.Headers = d.value(f.value, ipath+".headers")
			d.checkHeaders(c.Headers, ipath+".headers")
		}
		if f, ok := o["body"]; ok {
			c.Body = d.stringValue(f.value, ipath+".body")
		}
		if f, ok := o["token"]; ok {
			tok := d.str(f.value, ipath+".token")
			if m := envName.FindStringSubmatch(tok); m != nil {
				c.TokenEnv = m[1]
			} else {
				d.errorf(f.value, ipath+".token", "token: takes an environment variable of the operator, written $NAME; a token written into the katalog is readable by anyone who can read the katalog — put it in a Secret and use auth: {secretRef: {name: …, key: …}}")
			}
		}
		if f, ok := o["auth"]; ok {
			c.Auth = d.externalAuth(f, ipath+".auth")
			if c.TokenEnv != "" {
				d.errorf(f.key, ipath+".auth", "token and auth both set a credential; keep one")
			}
		}
		c.Timeout = d.durationKey(o, "timeout", ipath, c.Timeout, 10*time.Minute)
		c.CacheFor = d.durationKey(o, "cacheFor", ipath, c.CacheFor, 24*time.Hour)
		if f, ok := o["expectedStatus"]; ok {
			if s, ok := d.integer(f.value, ipath+".expectedStatus"); ok {
				if s < 100 || s > 599 {
					d.errorf(f.value, ipath+".expectedStatus", "expectedStatus %d is not an HTTP status (100-599)", s)
				}
				c.ExpectedStatus = s
			}
		}
		if f, ok := o["continueOnError"]; ok {
			c.ContinueOnError = d.boolean(f.value, ipath+".continueOnError")
		}
		d.callLimits(o, ipath, &c.Retries, &c.MaxBytes)
		if f, ok := o["when"]; ok {
			c.When = d.when(f.value, ipath+".when")
		}
		for _, key := range []string{"or", "anyOf"} {
			if f, ok := o[key]; ok {
				if c.Or != nil {
					d.errorf(f.key, ipath+"."+key, "both or and its older name anyOf are set; keep or")
					continue
				}
				c.Or = d.when(f.value, ipath+"."+key)
			}
		}
		if f, ok := o["schema"]; ok {
			c.JSONSchema, c.Schema = d.bodySchema(f.value, ipath+".schema")
			c.SchemaPos = d.pos(f.key)
		}
		for _, prev := range box.External {
			if prev.Name == c.Name && c.Name != "" {
				d.errorAt(c.NamePos, ipath+".name", "an external call named %q is already declared at %s; names are the entry's, whatever the hook", c.Name, prev.NamePos)
			}
		}
		box.External = append(box.External, c)
	}
}

// stringValue decodes a string that may be an expression.
func (d *decoder) stringValue(n *yaml.Node, path string) *Value {
	v := d.value(n, path)
	if v.Kind != StringValue {
		d.errorf(n, path, "must be a string, got %s", describe(orNode(Resolve(n), &yaml.Node{})))
	}
	return v
}

// checkHeaders: a map of header names to strings.
func (d *decoder) checkHeaders(v *Value, path string) {
	if v.Kind != MapValue {
		d.errorAt(v.Pos, path, "headers is a map of header name to value")
		return
	}
	for _, e := range v.Map {
		if strings.EqualFold(e.Key, "Authorization") {
			d.errorAt(e.KeyPos, path+"."+e.Key, "the Authorization header carries a credential: take it from a Secret with auth: {secretRef: {name: …, key: …}} (or token: $ENV) instead of writing it into the katalog")
		}
		if e.Value.Kind != StringValue && e.Value.Kind != IntValue && e.Value.Kind != BoolValue {
			d.errorAt(e.Value.Pos, path+"."+e.Key, "a header value is a string, got %s", e.Value.Kind)
		}
	}
}

func (d *decoder) externalAuth(f field, path string) *ExternalAuth {
	o := d.mapping(f.value, path, externalAuthKeys, nil)
	a := &ExternalAuth{Pos: d.pos(f.key), Key: "token", Scheme: "Bearer"}
	if s, ok := o["scheme"]; ok {
		switch v := d.str(s.value, path+".scheme"); v {
		case "Bearer", "Basic":
			a.Scheme = v
		default:
			d.errorf(s.value, path+".scheme", "scheme %q is not Bearer or Basic", v)
		}
	}
	ref, ok := o["secretRef"]
	if !ok {
		d.errorf(f.key, path, "auth needs secretRef: {name: SECRET, key: KEY}")
		return a
	}
	ro := d.mapping(ref.value, path+".secretRef", secretRefKeys, nil)
	a.Secret = d.str(ro["name"].value, path+".secretRef.name")
	if k := d.str(ro["key"].value, path+".secretRef.key"); k != "" {
		a.Key = k
	}
	a.Namespace = d.str(ro["namespace"].value, path+".secretRef.namespace")
	if a.Secret == "" {
		d.errorf(ref.key, path+".secretRef", "secretRef needs the Secret's name")
	}
	for _, s := range []string{a.Secret, a.Namespace, a.Key} {
		if strings.Contains(s, "{{") || strings.Contains(s, "${") {
			d.errorf(ref.value, path+".secretRef", "secretRef names its Secret with literals (the install grants read access to exactly that Secret)")
			break
		}
	}
	return a
}

// durationKey decodes o[key] as a duration between 0 (exclusive) and max.
// callLimits reads the retries and maxBytes of an HTTP read (an external
// call, a cross read with source:) into the given fields when written.
func (d *decoder) callLimits(o object, path string, retries *int, maxBytes *int64) {
	if f, ok := o["retries"]; ok {
		if r, ok := d.integer(f.value, path+".retries"); ok {
			if r < 0 || r > 10 {
				d.errorf(f.value, path+".retries", "retries must be between 0 and 10, got %d", r)
			}
			*retries = r
		}
	}
	if f, ok := o["maxBytes"]; ok {
		if m, ok := d.integer(f.value, path+".maxBytes"); ok {
			if m < 1 || m > MaxExternalMaxBytes {
				d.errorf(f.value, path+".maxBytes", "maxBytes must be between 1 and %d (16 MiB), got %d", MaxExternalMaxBytes, m)
			}
			*maxBytes = int64(m)
		}
	}
}

func (d *decoder) durationKey(o object, key, path string, def, max time.Duration) time.Duration {
	f, ok := o[key]
	if !ok {
		return def
	}
	dur, err := ParseDuration(d.str(f.value, path+"."+key))
	switch {
	case err != nil:
		d.errorf(f.value, path+"."+key, "%v", err)
	case dur <= 0 || dur > max:
		d.errorf(f.value, path+"."+key, "%s must be above 0 and at most %v", key, max)
	default:
		return dur
	}
	return def
}

// bodySchema decodes an OpenAPI v3 schema (as in a CRD) into its structural
// form.
func (d *decoder) bodySchema(n *yaml.Node, path string) (*apiextensionsv1.JSONSchemaProps, *structuralschema.Structural) {
	var raw any
	if err := Resolve(n).Decode(&raw); err != nil {
		d.errorf(n, path, "schema: %v", err)
		return nil, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		d.errorf(n, path, "schema: %v", err)
		return nil, nil
	}
	props := &apiextensionsv1.JSONSchemaProps{}
	if err := json.Unmarshal(b, props); err != nil {
		d.errorf(n, path, "schema is not an OpenAPI v3 schema (as a CRD version's openAPIV3Schema): %v", err)
		return nil, nil
	}
	s, err := StructuralSchema(props)
	if err != nil {
		d.errorf(n, path, "schema is not structural (every field needs a type, as in a CRD): %v", err)
		return nil, nil
	}
	return props, s
}

// allowedHosts decodes spec.allowedHosts: host names (exact, or *.suffix for
// any name below suffix) external calls may reach.
func (d *decoder) allowedHosts(k *Katalog, f field) {
	k.AllowedHostsPos = d.pos(f.key)
	for i, h := range d.strList(f.value, "spec.allowedHosts") {
		p := fmt.Sprintf("spec.allowedHosts[%d]", i)
		name := strings.TrimPrefix(h, "*.")
		if h == "" || strings.ContainsAny(name, "*/:@ ") || strings.Contains(h, "{{") {
			d.errorf(Resolve(f.value).Content[i], p, "allowedHosts lists host names (api.example.com) or *.suffix (*.example.com), got %q", h)
			continue
		}
		k.AllowedHosts = append(k.AllowedHosts, strings.ToLower(h))
	}
	if k.AllowedHosts == nil {
		k.AllowedHosts = []string{}
	}
}
