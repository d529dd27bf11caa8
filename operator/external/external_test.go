package external

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// server serves the behaviours an external call must survive; hits counts
// the requests per path.
func server(t *testing.T) (*httptest.Server, *sync.Map) {
	t.Helper()
	var hits sync.Map
	count := func(p string) {
		v, _ := hits.LoadOrStore(p, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		count("/ok")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"level": 3, "name": "%s", "auth": %q}`, r.URL.Query().Get("n"), r.Header.Get("Authorization"))
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) { count("/text"); fmt.Fprint(w, "healthy") })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		count("/slow")
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
		fmt.Fprint(w, "late")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { count("/big"); fmt.Fprint(w, strings.Repeat("x", 4096)) })
	mux.HandleFunc("/badjson", func(w http.ResponseWriter, r *http.Request) { count("/badjson"); fmt.Fprint(w, `{"level": 3`) })
	mux.HandleFunc("/wrongtype", func(w http.ResponseWriter, r *http.Request) { count("/wrongtype"); fmt.Fprint(w, `{"level": "high"}`) })
	mux.HandleFunc("/500", func(w http.ResponseWriter, r *http.Request) { count("/500"); http.Error(w, "boom", 500) })
	mux.HandleFunc("/404", func(w http.ResponseWriter, r *http.Request) { count("/404"); http.NotFound(w, r) })
	mux.HandleFunc("/redirect-metadata", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s, &hits
}

func hitsOf(m *sync.Map, p string) int64 {
	v, ok := m.Load(p)
	if !ok {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

func levelSchema(t *testing.T) *Schema {
	t.Helper()
	s, err := NewSchema(&apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"level": {Type: "integer"}}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

func request(url string) Request {
	return Request{Owner: "uid-1", Name: "c", Method: "GET", URL: url, Timeout: 300 * time.Millisecond, Retries: 0, MaxBytes: 1024, CacheFor: time.Minute}
}

func TestCall(t *testing.T) {
	s, hits := server(t)
	cases := []struct {
		name string
		req  func(r *Request)
		// status and body of the result; err: a substring of its error
		// ("" when it succeeds); json: the decoded level ("" none).
		status   int
		err      string
		json     string
		attempts int64
		path     string
	}{
		{name: "JSON typed by the schema", req: func(r *Request) { r.URL = s.URL + "/ok?n=a"; r.Schema = levelSchema(t) }, status: 200, json: "3", path: "/ok", attempts: 1},
		{name: "text without a schema", req: func(r *Request) { r.URL = s.URL + "/text" }, status: 200, path: "/text", attempts: 1},
		{name: "timeout", req: func(r *Request) { r.URL = s.URL + "/slow" }, err: "no response within the timeout of 300ms", path: "/slow", attempts: 1},
		{name: "timeout retried", req: func(r *Request) { r.URL = s.URL + "/slow"; r.Retries = 1 }, err: "no response within the timeout of 300ms", path: "/slow", attempts: 2},
		{name: "oversize", req: func(r *Request) { r.URL = s.URL + "/big" }, status: 200, err: "the response body is larger than 1024 bytes (maxBytes)", path: "/big", attempts: 1},
		{name: "bad JSON with a schema", req: func(r *Request) { r.URL = s.URL + "/badjson"; r.Schema = levelSchema(t) }, status: 200, err: "the response is not JSON", path: "/badjson", attempts: 1},
		{name: "bad JSON without a schema is text", req: func(r *Request) { r.URL = s.URL + "/badjson" }, status: 200, path: "/badjson", attempts: 1},
		{name: "JSON against its schema", req: func(r *Request) { r.URL = s.URL + "/wrongtype"; r.Schema = levelSchema(t) }, status: 200, err: "the response does not match the call's schema: level: Invalid value: \"string\": level in body must be of type integer", path: "/wrongtype", attempts: 1},
		{name: "500 retried with backoff", req: func(r *Request) { r.URL = s.URL + "/500"; r.Retries = 2 }, status: 500, err: "HTTP 500", path: "/500", attempts: 3},
		{name: "404 is not retried", req: func(r *Request) { r.URL = s.URL + "/404"; r.Retries = 2 }, status: 404, err: "HTTP 404", path: "/404", attempts: 1},
		{name: "expected status", req: func(r *Request) { r.URL = s.URL + "/text"; r.ExpectedStatus = 204 }, status: 200, err: "expected status 204, got 200", path: "/text", attempts: 1},
		{name: "a credential", req: func(r *Request) {
			r.URL = s.URL + "/ok"
			r.Credential = func(context.Context) (string, error) { return "Bearer t0k", nil }
		}, status: 200, json: "3", path: "/ok", attempts: 1},
		{name: "scheme", req: func(r *Request) { r.URL = "file:///etc/passwd" }, err: `only http and https are called`},
		{name: "allowedHosts", req: func(r *Request) { r.URL = s.URL + "/ok"; r.AllowedHosts = []string{"*.example.com"} }, err: "host 127.0.0.1 is not in the katalog's allowedHosts (*.example.com)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := New(Options{Allow: loopback, Backoff: 10 * time.Millisecond})
			r := request("")
			tc.req(&r)
			before := hitsOf(hits, tc.path)
			res := c.Do(context.Background(), r)
			if !res.Called || res.Status != tc.status || !strings.Contains(res.Error, tc.err) || (tc.err == "") != (res.Error == "") {
				t.Fatalf("result: called %v, status %d, error %q; want status %d, error %q", res.Called, res.Status, res.Error, tc.status, tc.err)
			}
			if tc.json != "" {
				m, _ := res.JSON.(map[string]any)
				if got := fmt.Sprint(m["level"]); !res.HasJSON || got != tc.json {
					t.Errorf("json.level = %v (decoded: %v), want %s", got, res.HasJSON, tc.json)
				}
			}
			if tc.path != "" {
				if got := hitsOf(hits, tc.path) - before; got != tc.attempts {
					t.Errorf("the server saw %d requests, want %d", got, tc.attempts)
				}
			}
		})
	}
}

// A credential travels in the Authorization header.
func TestCallCredential(t *testing.T) {
	s, _ := server(t)
	c := New(Options{Allow: loopback})
	r := request(s.URL + "/ok")
	r.Credential = func(context.Context) (string, error) { return "Bearer t0k", nil }
	res := c.Do(context.Background(), r)
	if res.Error != "" || res.JSON.(map[string]any)["auth"] != "Bearer t0k" {
		t.Fatalf("result %+v", res)
	}
}

// Where calls may go is checked on the addresses connected to: loopback
// and private addresses only when --external-allow lists them, link-local
// and metadata addresses never; a name is refused for what it resolves to;
// a redirect is checked like the first request.
func TestGuard(t *testing.T) {
	s, hits := server(t)
	port := s.URL[strings.LastIndex(s.URL, ":"):]
	cases := []struct {
		name  string
		allow []netip.Prefix
		url   string
		err   string
	}{
		{"loopback without --external-allow", nil, s.URL + "/text", "address 127.0.0.1 is refused: it is in 127.0.0.0/8 (loopback or private); the operator calls it only when --external-allow lists a range holding it"},
		{"a name resolving to loopback", nil, "http://localhost" + port + "/text", "is refused: it is in "},
		{"loopback allowed", loopback, s.URL + "/text", ""},
		{"private without --external-allow", nil, "http://10.255.255.1/", "address 10.255.255.1 is refused: it is in 10.0.0.0/8"},
		{"metadata even when everything is allowed", []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}, "http://169.254.169.254/latest/meta-data/", "address 169.254.169.254 is refused: link-local, cloud metadata and non-host addresses are never called"},
		{"IPv4-mapped metadata", []netip.Prefix{netip.MustParsePrefix("::/0")}, "http://[::ffff:169.254.169.254]/", "address 169.254.169.254 is refused"},
		{"a redirect to metadata", loopback, s.URL + "/redirect-metadata", "address 169.254.169.254 is refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := New(Options{Allow: tc.allow})
			before := hitsOf(hits, "/text")
			res := c.Do(context.Background(), request(tc.url))
			if !strings.Contains(res.Error, tc.err) || (tc.err == "") != (res.Error == "") {
				t.Fatalf("error %q, want %q", res.Error, tc.err)
			}
			if tc.err != "" && strings.Contains(tc.url, "/text") && hitsOf(hits, "/text") != before {
				t.Errorf("a refused call reached the server")
			}
		})
	}
}

// A result is reused for the same owner and request until cacheFor has
// passed; another owner, or another URL, calls again.
func TestCache(t *testing.T) {
	s, hits := server(t)
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	c := New(Options{Allow: loopback, Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	r := request(s.URL + "/text")
	r.CacheFor = 30 * time.Second
	for i := 0; i < 3; i++ {
		if res := c.Do(context.Background(), r); res.Error != "" {
			t.Fatal(res.Error)
		}
	}
	if got := hitsOf(hits, "/text"); got != 1 {
		t.Fatalf("3 calls within cacheFor reached the server %d times, want 1", got)
	}
	other := r
	other.Owner = "uid-2"
	c.Do(context.Background(), other)
	r2 := r
	r2.URL += "?v=2"
	c.Do(context.Background(), r2)
	if got := hitsOf(hits, "/text"); got != 3 {
		t.Fatalf("another owner and another URL reached the server %d times in all, want 3", got)
	}
	mu.Lock()
	now = now.Add(31 * time.Second)
	mu.Unlock()
	c.Do(context.Background(), r)
	if got := hitsOf(hits, "/text"); got != 4 {
		t.Fatalf("after cacheFor the call reached the server %d times in all, want 4", got)
	}
	if c.Attempts("c") != 4 {
		t.Errorf("Attempts = %d, want 4", c.Attempts("c"))
	}
}

// Skip (simulate --skip-external) makes no call.
func TestSkip(t *testing.T) {
	s, hits := server(t)
	res := New(Options{Skip: true, Allow: loopback}).Do(context.Background(), request(s.URL+"/text"))
	if res.Called || hitsOf(hits, "/text") != 0 {
		t.Fatalf("a skipped call: %+v, %d requests", res, hitsOf(hits, "/text"))
	}
}

func TestParseAllow(t *testing.T) {
	got, err := ParseAllow([]string{"10.96.0.0/12,127.0.0.1", "fd00::/8"})
	if err != nil || fmt.Sprint(got) != "[10.96.0.0/12 127.0.0.1/32 fd00::/8]" {
		t.Fatalf("ParseAllow = %v, %v", got, err)
	}
	if _, err := ParseAllow([]string{"cluster"}); err == nil || !strings.Contains(err.Error(), `--external-allow "cluster" is not a CIDR range`) {
		t.Fatalf("ParseAllow(cluster) error = %v", err)
	}
}
