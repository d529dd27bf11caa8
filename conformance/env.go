package conformance

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"path/filepath"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/orkspace/orkestra-cel/envassets"
)

// Environment is a running kube-apiserver and etcd (controller-runtime's
// envtest) with clients for it. One environment can serve several runs,
// one after the other or at once, as long as their katalogs name different
// CRDs.
type Environment struct {
	// Assets is the directory kube-apiserver and etcd were started from.
	Assets string
	// Config reaches the API server as cluster admin.
	Config *rest.Config

	env *envtest.Environment
	dyn dynamic.Interface
	ext apiextensionsclient.Interface
}

// StartEnvironment starts kube-apiserver and etcd. assetsDir holds the two
// binaries; empty means $KUBEBUILDER_ASSETS, else what envassets.Script prints,
// the script searched for in searchDirs, the working directory, and their
// parents. Stop it when done.
func StartEnvironment(ctx context.Context, assetsDir string, searchDirs ...string) (*Environment, error) {
	dir, err := envassets.Find(ctx, assetsDir, nil, searchDirs...)
	if err != nil {
		return nil, err
	}
	te := &envtest.Environment{
		BinaryAssetsDirectory:    dir,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	te.ControlPlane.GetAPIServer().Path = filepath.Join(dir, "kube-apiserver")
	te.ControlPlane.Etcd = &envtest.Etcd{Path: filepath.Join(dir, "etcd")}
	cfg, err := te.Start()
	if err != nil {
		_ = te.Stop()
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", dir, err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	cfg.WarningHandler = rest.NoWarnings{}
	e := &Environment{Assets: dir, Config: cfg, env: te}
	if e.dyn, err = dynamic.NewForConfig(cfg); err == nil {
		e.ext, err = apiextensionsclient.NewForConfig(cfg)
	}
	if err != nil {
		_ = te.Stop()
		return nil, fmt.Errorf("building API clients: %w", err)
	}
	return e, nil
}

// Stop stops the API server and etcd and removes their data.
func (e *Environment) Stop() error {
	if e == nil || e.env == nil {
		return nil
	}
	return e.env.Stop()
}

// servingCert is a CA made for one run and a serving certificate it signed
// for 127.0.0.1, ::1 and localhost.
type servingCert struct {
	caPEM []byte
	cert  tls.Certificate
}

func newServingCert() (*servingCert, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "orkestra conformance CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	)
	if err != nil {
		return nil, err
	}
	return &servingCert{caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), cert: cert}, nil
}
