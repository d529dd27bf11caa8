package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/orkspace/orkestra-cel/engine"
)

// Environment variables read when the corresponding flag is not set (the
// original Orkestra's names).
const (
	EnvTLSCert = "TLS_CERT"
	EnvTLSKey  = "TLS_KEY"
)

// Config is the serving configuration shared by `orkestra serve` and
// `orkestra run`.
type Config struct {
	// WebhookAddr is the HTTPS address of POST /convert (default :8443).
	WebhookAddr string
	// HTTPAddr is the plain HTTP address of /metrics, /healthz, /readyz and
	// /katalog; empty disables it.
	HTTPAddr string
	// CertFile and KeyFile are the PEM certificate (chain) and key of the
	// webhook; they are reloaded when they change on disk.
	CertFile, KeyFile string
	// ClientCAFile, when set, makes the webhook require a client certificate
	// signed by one of the PEM CAs it holds.
	ClientCAFile string
	// MaxRequestBytes bounds a ConversionReview body.
	MaxRequestBytes int64
	// MaxInflightBytes bounds the body bytes of all /convert requests in
	// flight together (default DefaultMaxInflightBytes()).
	MaxInflightBytes int64
	// BodyTimeout bounds the time from a /convert request's headers to its
	// body's last byte (default DefaultBodyTimeout).
	BodyTimeout time.Duration
	// ShutdownTimeout bounds how long in-flight requests may finish after
	// the context is cancelled.
	ShutdownTimeout time.Duration
	// Timeouts of both servers.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// CertPollInterval is how often the certificate files are re-read, on
	// top of file-change notifications.
	CertPollInterval time.Duration
}

// DefaultConfig returns the defaults of the serving flags.
func DefaultConfig() Config {
	return Config{
		WebhookAddr:       ":8443",
		HTTPAddr:          ":8080",
		MaxRequestBytes:   DefaultMaxRequestBytes,
		MaxInflightBytes:  DefaultMaxInflightBytes(),
		BodyTimeout:       DefaultBodyTimeout,
		ShutdownTimeout:   30 * time.Second,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		CertPollInterval:  10 * time.Second,
	}
}

// AddFlags registers the serving flags on fs, with c's values as defaults.
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.CertFile, "tls-cert", c.CertFile, "PEM certificate of the HTTPS webhook, reloaded when it changes (env "+EnvTLSCert+")")
	fs.StringVar(&c.KeyFile, "tls-key", c.KeyFile, "PEM private key of the HTTPS webhook, reloaded when it changes (env "+EnvTLSKey+")")
	fs.StringVar(&c.ClientCAFile, "client-ca", c.ClientCAFile, "PEM CA bundle: require webhook clients to present a certificate it signed")
	fs.StringVar(&c.WebhookAddr, "webhook-addr", c.WebhookAddr, "HTTPS address of POST /convert")
	fs.StringVar(&c.HTTPAddr, "http-addr", c.HTTPAddr, "plain HTTP address of /metrics, /healthz, /readyz and /katalog (empty: off)")
	fs.Int64Var(&c.MaxRequestBytes, "max-request-bytes", c.MaxRequestBytes, "largest ConversionReview body accepted (larger: HTTP 413)")
	fs.Int64Var(&c.MaxInflightBytes, "max-inflight-bytes", c.MaxInflightBytes, "request body bytes all /convert requests may hold at once (default: GOMEMLIMIT, else 512Mi, divided by 64)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout, "how long in-flight requests may finish after SIGTERM")
}

// Complete fills the certificate paths from the environment (TLS_CERT,
// TLS_KEY) where the flags left them empty. getenv is os.Getenv in the binary.
func (c *Config) Complete(getenv func(string) string) {
	if c.CertFile == "" {
		c.CertFile = getenv(EnvTLSCert)
	}
	if c.KeyFile == "" {
		c.KeyFile = getenv(EnvTLSKey)
	}
}

// Validate reports a configuration the server cannot start with.
func (c *Config) Validate() error {
	switch {
	case c.CertFile == "" && c.KeyFile == "":
		return errors.New("no TLS certificate for the /convert webhook (the API server calls it over HTTPS only): " +
			"pass --tls-cert FILE and --tls-key FILE, or set " + EnvTLSCert + " and " + EnvTLSKey + ". " +
			"For a local try: openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=localhost " +
			"-addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout tls.key -out tls.crt")
	case c.CertFile == "":
		return errors.New("--tls-key is set but --tls-cert is not; pass both (or set " + EnvTLSCert + ")")
	case c.KeyFile == "":
		return errors.New("--tls-cert is set but --tls-key is not; pass both (or set " + EnvTLSKey + ")")
	case c.WebhookAddr == "":
		return errors.New("--webhook-addr is empty; the /convert webhook needs an address, e.g. :8443")
	case c.MaxRequestBytes <= 0:
		return fmt.Errorf("--max-request-bytes must be positive, got %d", c.MaxRequestBytes)
	case c.MaxInflightBytes != 0 && c.MaxInflightBytes <= c.MaxRequestBytes:
		return fmt.Errorf("--max-inflight-bytes (%d) must exceed --max-request-bytes (%d): a review of the largest size must fit in the budget", c.MaxInflightBytes, c.MaxRequestBytes)
	}
	return nil
}

// Server serves the /convert webhook over HTTPS, and /metrics, /healthz,
// /readyz and /katalog over plain HTTP, until its context is cancelled.
// Fill the fields, then call Run once.
type Server struct {
	Config
	// Plan is the compiled katalog: the /katalog entries and the served
	// kinds and versions.
	Plan *engine.Plan
	// Converter converts objects (engine/conversion.Converter).
	Converter Converter
	// Runtime supplies run-time entry facts; nil reports static values:
	// workers from the plan, not started, healthy while serving.
	Runtime RuntimeStatus
	// Resources reads the custom resources of the /katalog/{crd}/cr
	// routes; nil answers them 503 (serve).
	Resources ResourceReader
	// Registry receives the conversion metrics and backs /metrics; nil means
	// controller-runtime's metrics.Registry.
	Registry ctrlmetrics.RegistererGatherer
	// ReadyCheck, when set, must also pass for /readyz (the operator's caches).
	ReadyCheck func() error
	// ExtraHTTP are more handlers for the plain HTTP server, by pattern.
	ExtraHTTP map[string]http.Handler
	Log       logr.Logger
	// WebhookListener and HTTPListener, when set, are used instead of
	// listening on the configured addresses (tests).
	WebhookListener, HTTPListener net.Listener

	once     sync.Once
	started  atomic.Bool
	initErr  error
	metrics  *Metrics
	ready    chan struct{}
	serving  atomic.Bool
	stopping atomic.Bool
	webhook  http.Handler
	convert  *ConvertHandler // the /convert handler webhook serves (tests read its budget)
	http     http.Handler
}

func (s *Server) init() error {
	s.once.Do(func() {
		s.ready = make(chan struct{})
		def := DefaultConfig()
		setDefault(&s.ShutdownTimeout, def.ShutdownTimeout)
		setDefault(&s.ReadHeaderTimeout, def.ReadHeaderTimeout)
		setDefault(&s.ReadTimeout, def.ReadTimeout)
		setDefault(&s.WriteTimeout, def.WriteTimeout)
		setDefault(&s.IdleTimeout, def.IdleTimeout)
		setDefault(&s.CertPollInterval, def.CertPollInterval)
		setDefault(&s.MaxRequestBytes, def.MaxRequestBytes)
		setDefault(&s.MaxInflightBytes, def.MaxInflightBytes)
		setDefault(&s.BodyTimeout, def.BodyTimeout)
		if s.WebhookListener != nil {
			s.WebhookAddr = s.WebhookListener.Addr().String()
		}
		setDefault(&s.WebhookAddr, def.WebhookAddr)
		if s.Registry == nil {
			s.Registry = ctrlmetrics.Registry
		}
		if s.initErr = s.Validate(); s.initErr != nil {
			return
		}
		if s.Plan == nil || s.Converter == nil {
			s.initErr = errors.New("webhook.Server needs a Plan and a Converter")
			return
		}
		if s.metrics, s.initErr = NewMetrics(s.Registry); s.initErr != nil {
			return
		}
		s.webhook = s.webhookMux()
		s.http = s.httpMux()
	})
	return s.initErr
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// Metrics returns the server's conversion metrics (nil before Run or Ready).
func (s *Server) Metrics() *Metrics {
	if s.init() != nil {
		return nil
	}
	return s.metrics
}

// Ready is closed once both listeners serve.
func (s *Server) Ready() <-chan struct{} {
	_ = s.init()
	return s.ready
}

func (s *Server) webhookMux() http.Handler {
	mux := http.NewServeMux()
	s.convert = NewConvertHandler(s.Converter, ConvertOptions{
		MaxRequestBytes:  s.MaxRequestBytes,
		MaxInflightBytes: s.MaxInflightBytes,
		BodyTimeout:      s.BodyTimeout,
		Metrics:          s.metrics,
		Served:           s.Plan.Served(),
		KatalogDir:       katalogDir(s.Plan),
		Log:              s.Log.WithName("convert"),
	})
	mux.Handle(ConvertPath, s.convert)
	return mux
}

// katalogDir is the directory of the katalog's first path (the path itself
// when it is a directory); "" when the plan names none.
func katalogDir(plan *engine.Plan) string {
	if plan.Katalog == nil || plan.Katalog.File == "" {
		return ""
	}
	f := plan.Katalog.File
	if info, err := os.Stat(f); err == nil && info.IsDir() {
		return f
	}
	return filepath.Dir(f)
}

func (s *Server) httpMux() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := s.readiness(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = fmt.Fprintf(w, "not ready: %v\n", err)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	k := &katalogAPI{plan: s.Plan, metrics: s.metrics, runtime: s.Runtime, resources: s.Resources,
		serving: func() bool { return s.readiness() == nil }, now: time.Now}
	k.register(mux)
	for pattern, h := range s.ExtraHTTP {
		mux.Handle(pattern, h)
	}
	return mux
}

func (s *Server) readiness() error {
	switch {
	case s.stopping.Load():
		return errors.New("shutting down")
	case !s.serving.Load():
		return errors.New("the HTTPS webhook is not serving yet")
	case s.ReadyCheck != nil:
		return s.ReadyCheck()
	}
	return nil
}

// aeadSuites are the TLS 1.2 suites the webhook offers: ECDHE with AEAD
// ciphers only (TLS 1.3 suites are AEAD by definition and not configurable).
var aeadSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// tlsConfig returns the webhook's TLS configuration: TLS 1.2 at least with
// AEAD suites only, the certificate from watcher, and client certificates
// required and verified against ClientCAFile when it is set.
func (s *Server) tlsConfig(watcher *certwatcher.CertWatcher) (*tls.Config, error) {
	cfg := &tls.Config{
		MinVersion:     tls.VersionTLS12,
		CipherSuites:   aeadSuites,
		GetCertificate: watcher.GetCertificate,
		NextProtos:     []string{"h2", "http/1.1"},
	}
	if s.ClientCAFile != "" {
		pem, err := os.ReadFile(s.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("reading --client-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--client-ca %s holds no PEM certificate", s.ClientCAFile)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// Run serves until ctx is cancelled, then shuts down gracefully: /readyz
// turns unready, and in-flight requests get ShutdownTimeout to finish. It
// returns nil after a clean shutdown.
func (s *Server) Run(ctx context.Context) error {
	if err := s.init(); err != nil {
		return err
	}
	if !s.started.CompareAndSwap(false, true) {
		return errors.New("webhook.Server.Run called twice")
	}
	watcher, err := certwatcher.New(s.CertFile, s.KeyFile)
	if err != nil {
		return fmt.Errorf("loading the TLS certificate (--tls-cert %s, --tls-key %s): %w", s.CertFile, s.KeyFile, err)
	}
	watcher = watcher.WithWatchInterval(s.CertPollInterval)
	tlsCfg, err := s.tlsConfig(watcher)
	if err != nil {
		return err
	}

	wl := s.WebhookListener
	if wl == nil {
		if wl, err = net.Listen("tcp", s.WebhookAddr); err != nil {
			return fmt.Errorf("webhook listener: %w", err)
		}
	}
	hl := s.HTTPListener
	if hl == nil && s.HTTPAddr != "" {
		if hl, err = net.Listen("tcp", s.HTTPAddr); err != nil {
			_ = wl.Close()
			return fmt.Errorf("HTTP listener: %w", err)
		}
	}

	errorLog := log.New(logWriter{s.Log.WithName("http")}, "", 0)
	webhookSrv := &http.Server{
		Handler:           s.webhook,
		TLSConfig:         tlsCfg,
		ReadHeaderTimeout: s.ReadHeaderTimeout,
		ReadTimeout:       s.ReadTimeout,
		WriteTimeout:      s.WriteTimeout,
		IdleTimeout:       s.IdleTimeout,
		ErrorLog:          errorLog,
		HTTP2:             http2Config(),
	}
	servers := []*http.Server{webhookSrv}
	var httpSrv *http.Server
	if hl != nil {
		httpSrv = &http.Server{
			Handler:           s.http,
			ReadHeaderTimeout: s.ReadHeaderTimeout,
			ReadTimeout:       s.ReadTimeout,
			WriteTimeout:      s.WriteTimeout,
			IdleTimeout:       s.IdleTimeout,
			ErrorLog:          errorLog,
		}
		servers = append(servers, httpSrv)
	}

	watchCtx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWatch()
	go func() {
		if err := watcher.Start(watchCtx); err != nil {
			s.Log.Error(err, "certificate watcher stopped; the certificate is no longer reloaded")
		}
	}()

	errs := make(chan error, 2)
	go func() { errs <- serveErr("HTTPS webhook", webhookSrv.ServeTLS(wl, "", "")) }()
	if httpSrv != nil {
		go func() { errs <- serveErr("HTTP", httpSrv.Serve(hl)) }()
	}
	s.serving.Store(true)
	close(s.ready)
	s.Log.Info("serving", "webhook", "https://"+wl.Addr().String()+ConvertPath, "http", addrOf(hl))

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errs:
	}
	s.stopping.Store(true)
	s.Log.Info("shutting down", "timeout", s.ShutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.ShutdownTimeout)
	defer cancel()
	var wg sync.WaitGroup
	shutdownErrs := make([]error, len(servers))
	for i, srv := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			shutdownErrs[i] = srv.Shutdown(shutdownCtx)
		}()
	}
	wg.Wait()
	s.serving.Store(false)
	if err := errors.Join(shutdownErrs...); err != nil && runErr == nil {
		runErr = fmt.Errorf("graceful shutdown: %w", err)
	}
	s.Log.Info("stopped")
	return runErr
}

func serveErr(name string, err error) error {
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("%s server: %w", name, err)
}

func addrOf(l net.Listener) string {
	if l == nil {
		return "off"
	}
	return "http://" + l.Addr().String()
}

// logWriter sends net/http's error log (TLS handshake errors, …) to logr at V(1).
type logWriter struct{ log logr.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.log.V(1).Info(strings.TrimSpace(string(p)))
	return len(p), nil
}
