// Package external makes the HTTP calls katalogs declare (external:),
// bounded and guarded: every call has a timeout and a response cap, goes
// only where the operator and the katalog permit (checked on the addresses
// connected to), is retried with backoff on transient failures, and its
// result is reused for the same custom resource and request for a while.
package external

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// Options configure a Client.
type Options struct {
	// Allow lists the loopback and private ranges calls may reach
	// (--external-allow); link-local and metadata addresses stay refused.
	Allow []netip.Prefix
	// Skip makes no call at all: every result reads as not called
	// (simulate --skip-external).
	Skip bool
	// Now returns the current time (the cache's clock); nil: time.Now.
	Now func() time.Time
	// MaxCached bounds the results kept (default 10000); past it the
	// oldest go first.
	MaxCached int
	// Backoff is the wait before the first retry, doubled for each next
	// (default 200ms, at most 5s).
	Backoff time.Duration
}

// Client makes external calls. It is safe for concurrent use.
type Client struct {
	opts   Options
	guard  *guard
	client *http.Client

	mu    sync.Mutex
	cache map[string]cached
	order []string
	// attempts counts the requests sent per call name.
	attempts map[string]int
}

type cached struct {
	res     engine.ExternalResult
	expires time.Time
}

// New returns a client.
func New(o Options) *Client {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxCached <= 0 {
		o.MaxCached = 10000
	}
	if o.Backoff <= 0 {
		o.Backoff = 200 * time.Millisecond
	}
	g := &guard{allow: o.Allow}
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, ControlContext: g.control}
	tr := &http.Transport{
		// No proxy from the environment: a proxy would connect where the
		// guard cannot see.
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   10,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 0,
	}
	return &Client{opts: o, guard: g, cache: map[string]cached{}, attempts: map[string]int{}, client: &http.Client{Transport: tr}}
}

// Request is one call.
type Request struct {
	// Owner identifies the custom resource (its UID): results are cached
	// per owner.
	Owner string
	// Name is the call's name, for messages.
	Name    string
	Method  string
	URL     string
	Headers map[string]string
	Body    string
	// Credential returns the Authorization header's value; nil: none. It
	// is called only when the result is not cached.
	Credential func(context.Context) (string, error)
	// AllowedHosts narrows the hosts (the katalog's); nil: any.
	AllowedHosts   []string
	Timeout        time.Duration
	Retries        int
	MaxBytes       int64
	CacheFor       time.Duration
	ExpectedStatus int
	// Body: JSON is required and checked against it when set.
	Schema *Schema
}

// Schema checks decoded bodies against a call's declared schema.
type Schema struct {
	v validation.SchemaValidator
}

// NewSchema compiles a call's body schema once.
func NewSchema(props *apiextensionsv1.JSONSchemaProps) (*Schema, error) {
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, internal, nil); err != nil {
		return nil, err
	}
	v, _, err := validation.NewSchemaValidator(internal)
	if err != nil {
		return nil, err
	}
	return &Schema{v: v}, nil
}

// Do makes the call, or returns the cached result of the same request for
// the same owner. A failure is a result with Error set, never a panic.
func (c *Client) Do(ctx context.Context, r Request) engine.ExternalResult {
	if c.opts.Skip {
		return engine.ExternalResult{}
	}
	key := r.key()
	now := c.opts.Now()
	c.mu.Lock()
	if e, ok := c.cache[key]; ok && now.Before(e.expires) {
		c.mu.Unlock()
		return e.res
	}
	c.mu.Unlock()
	res := c.call(ctx, r)
	if ctx.Err() == nil {
		c.store(key, cached{res: res, expires: c.opts.Now().Add(r.CacheFor)})
	}
	return res
}

// Attempts returns how many requests were sent for calls named name.
func (c *Client) Attempts(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.attempts[name]
}

func (c *Client) count(name string) {
	c.mu.Lock()
	c.attempts[name]++
	c.mu.Unlock()
}

func (c *Client) store(key string, e cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cache[key]; !ok {
		c.order = append(c.order, key)
	}
	c.cache[key] = e
	for len(c.cache) > c.opts.MaxCached && len(c.order) > 0 {
		delete(c.cache, c.order[0])
		c.order = c.order[1:]
	}
}

// key identifies a request of an owner: what is sent, not the credential.
func (r Request) key() string {
	var b strings.Builder
	b.WriteString(r.Owner)
	b.WriteByte(0)
	b.WriteString(r.Name)
	b.WriteByte(0)
	b.WriteString(r.Method)
	b.WriteByte(0)
	b.WriteString(r.URL)
	b.WriteByte(0)
	names := make([]string, 0, len(r.Headers))
	for k := range r.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		b.WriteString(k + ":" + r.Headers[k] + "\n")
	}
	b.WriteByte(0)
	b.WriteString(r.Body)
	return b.String()
}

// call makes the request, retrying transient failures.
func (c *Client) call(ctx context.Context, r Request) engine.ExternalResult {
	u, err := url.Parse(r.URL)
	switch {
	case err != nil:
		return failed(0, "", fmt.Sprintf("url %q does not parse: %v", r.URL, err))
	case u.Scheme != "http" && u.Scheme != "https":
		return failed(0, "", fmt.Sprintf("url %q: only http and https are called", r.URL))
	case u.Host == "":
		return failed(0, "", fmt.Sprintf("url %q has no host", r.URL))
	case !hostAllowed(u.Hostname(), r.AllowedHosts):
		return failed(0, "", fmt.Sprintf("host %s is not in the katalog's allowedHosts (%s)", u.Hostname(), strings.Join(r.AllowedHosts, ", ")))
	}
	auth := ""
	if r.Credential != nil {
		if auth, err = r.Credential(ctx); err != nil {
			return failed(0, "", fmt.Sprintf("reading the credential: %v", err))
		}
	}
	wait := c.opts.Backoff
	var res engine.ExternalResult
	for attempt := 0; ; attempt++ {
		var retry bool
		res, retry = c.attempt(ctx, r, u, auth)
		if !retry || attempt >= r.Retries {
			return res
		}
		select {
		case <-ctx.Done():
			return res
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// attempt sends the request once; retry says the failure is transient.
func (c *Client) attempt(ctx context.Context, r Request, u *url.URL, auth string) (res engine.ExternalResult, retry bool) {
	c.count(r.Name)
	actx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	var body io.Reader
	if r.Body != "" {
		body = strings.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(actx, r.Method, u.String(), body)
	if err != nil {
		return failed(0, "", fmt.Sprintf("building the request: %v", err)), false
	}
	if r.Body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/plain;q=0.9, */*;q=0.5")
	req.Header.Set("User-Agent", "orkestra")
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	client := *c.client
	client.CheckRedirect = func(next *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		if next.URL.Scheme != "http" && next.URL.Scheme != "https" || !hostAllowed(next.URL.Hostname(), r.AllowedHosts) {
			return fmt.Errorf("redirect to %s is not allowed (scheme or allowedHosts)", next.URL.Redacted())
		}
		return nil
	}
	resp, err := client.Do(req)
	if err != nil {
		var refused *RefusedError
		switch {
		case errors.As(err, &refused):
			return failed(0, "", fmt.Sprintf("%s %s: %v", r.Method, u.Redacted(), refused)), false
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			return failed(0, "", fmt.Sprintf("%s %s: no response within the timeout of %v", r.Method, u.Redacted(), r.Timeout)), true
		}
		return failed(0, "", fmt.Sprintf("%s %s: %v", r.Method, u.Redacted(), err)), ctx.Err() == nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, r.MaxBytes+1))
	if err != nil {
		msg := fmt.Sprintf("reading the response: %v", err)
		if errors.Is(err, context.DeadlineExceeded) {
			msg = fmt.Sprintf("the response did not arrive within the timeout of %v", r.Timeout)
		}
		return failed(resp.StatusCode, "", msg), ctx.Err() == nil
	}
	if int64(len(data)) > r.MaxBytes {
		return failed(resp.StatusCode, "", fmt.Sprintf("the response body is larger than %d bytes (maxBytes); the call is refused rather than read in part", r.MaxBytes)), false
	}
	res = engine.ExternalResult{Called: true, Status: resp.StatusCode, Body: string(data)}
	switch {
	case r.ExpectedStatus > 0 && resp.StatusCode != r.ExpectedStatus:
		res.Error = fmt.Sprintf("expected status %d, got %d", r.ExpectedStatus, resp.StatusCode)
	case r.ExpectedStatus == 0 && resp.StatusCode >= 400:
		res.Error = "HTTP " + strconv.Itoa(resp.StatusCode)
	}
	if res.Error != "" {
		return res, resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests
	}
	c.decode(&res, data, r.Schema)
	return res, false
}

// decode sets the body's JSON: required and checked with a schema, else
// read when the body is JSON.
func (c *Client) decode(res *engine.ExternalResult, data []byte, s *Schema) {
	v, err := jsonval.Decode(bytes.TrimSpace(data))
	if err != nil {
		if s != nil {
			res.Error = fmt.Sprintf("the response is not JSON (%v), but the call declares a schema for it", err)
		}
		return
	}
	if s != nil {
		if errs := validation.ValidateCustomResource(nil, v, s.v); len(errs) > 0 {
			res.Error = "the response does not match the call's schema: " + errs.ToAggregate().Error()
			return
		}
	}
	res.JSON, res.HasJSON = v, true
}

func failed(status int, body, msg string) engine.ExternalResult {
	return engine.ExternalResult{Called: true, Status: status, Body: body, Error: msg}
}

// BasicCredential encodes user:password for a Basic Authorization header.
func BasicCredential(userPassword string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(userPassword))
}
