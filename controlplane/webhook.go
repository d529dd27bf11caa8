package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/orkspace/orkestra-cel/webhook"
	"github.com/orkspace/orkestra-cel/webhook/certs"
)

// Webhook is this process's /convert endpoint for a session: a port on
// 127.0.0.1 and a certificate for it, signed by a CA made for the session.
type Webhook struct {
	Addr string
	URL  string
	// CAPEM is the CA the API server is given as the CRDs' caBundle.
	CAPEM             []byte
	CertFile, KeyFile string
}

// NewWebhook picks the port (0: a free one) and writes the session's
// certificate into dir/certs.
func NewWebhook(dir string, port int) (*Webhook, error) {
	if port == 0 {
		var err error
		if port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	w := &Webhook{Addr: fmt.Sprintf("127.0.0.1:%d", port)}
	w.URL = "https://" + w.Addr + webhook.ConvertPath
	caPEM, certPEM, keyPEM, err := certs.NewSelfSigned([]string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}, 30*24*time.Hour)
	if err != nil {
		return nil, err
	}
	w.CAPEM = caPEM
	certDir := filepath.Join(dir, "certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, err
	}
	w.CertFile, w.KeyFile = filepath.Join(certDir, certs.CertFileName), filepath.Join(certDir, certs.KeyFileName)
	if err := os.WriteFile(w.CertFile, certPEM, 0o600); err != nil {
		return nil, err
	}
	return w, os.WriteFile(w.KeyFile, keyPEM, 0o600)
}

// Serving is the serving configuration of the operator for this webhook,
// with its metrics, health and /katalog API at httpAddr ("" for none).
func (w *Webhook) Serving(httpAddr string) webhook.Config {
	serving := webhook.DefaultConfig()
	serving.WebhookAddr = w.Addr
	serving.HTTPAddr = httpAddr
	serving.CertFile, serving.KeyFile = w.CertFile, w.KeyFile
	serving.ShutdownTimeout = 5 * time.Second
	return serving
}

// wait waits until the webhook serves TLS with the session's certificate,
// or the operator fails.
func (w *Webhook) wait(ctx context.Context, opDone <-chan error) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(w.CAPEM)
	deadline := time.Now().Add(60 * time.Second)
	for {
		d := tls.Dialer{Config: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}}
		conn, err := d.DialContext(ctx, "tcp", w.Addr)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case err := <-opDone:
			if err == nil {
				err = errors.New("it stopped")
			}
			return fmt.Errorf("the operator did not start: %w", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the webhook does not serve on %s after 60s: %w", w.Addr, err)
		}
	}
}

// FreePort returns a port on 127.0.0.1 free at the time of the call.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
