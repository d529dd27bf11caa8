package conformance

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// AssetsScript is the script of an Orkestra checkout that builds (once) and
// prints the directory of kube-apiserver and etcd.
const AssetsScript = "hack/envtest-assets.sh"

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
// binaries; empty means $KUBEBUILDER_ASSETS, else what AssetsScript prints,
// the script searched for in searchDirs, the working directory, and their
// parents. Stop it when done.
func StartEnvironment(ctx context.Context, assetsDir string, searchDirs ...string) (*Environment, error) {
	dir, err := FindAssets(ctx, assetsDir, searchDirs...)
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

// errNoAssets explains how to get the binaries.
var errNoAssets = errors.New("kube-apiserver and etcd are needed for the apiserver checks and were not found. " +
	"Set KUBEBUILDER_ASSETS to a directory holding both binaries — in an Orkestra checkout run " +
	"`export KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh)` (or `make envtest`), which builds them from the " +
	"Go module proxy; elsewhere `go run sigs.k8s.io/controller-runtime/tools/setup-envtest@latest use -p path 1.37.x` prints such a directory")

// FindAssets returns the directory holding kube-apiserver and etcd: dir
// when given, else $KUBEBUILDER_ASSETS, else the output of AssetsScript
// found in searchDirs, the working directory or one of their parents.
func FindAssets(ctx context.Context, dir string, searchDirs ...string) (string, error) {
	check := func(d, from string) (string, error) {
		var missing []string
		for _, b := range []string{"kube-apiserver", "etcd"} {
			if st, err := os.Stat(filepath.Join(d, b)); err != nil || st.IsDir() {
				missing = append(missing, b)
			}
		}
		if len(missing) > 0 {
			return "", fmt.Errorf("%s names %s, which lacks %s: %w", from, d, strings.Join(missing, " and "), errNoAssets)
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return d, nil
		}
		return abs, nil
	}
	if dir != "" {
		return check(dir, "the assets directory option")
	}
	if env := os.Getenv("KUBEBUILDER_ASSETS"); env != "" {
		return check(env, "KUBEBUILDER_ASSETS")
	}
	if wd, err := os.Getwd(); err == nil {
		searchDirs = append(searchDirs, wd)
	}
	seen := map[string]bool{}
	for _, start := range searchDirs {
		d, err := filepath.Abs(start)
		if err != nil {
			continue
		}
		for {
			if seen[d] {
				break
			}
			seen[d] = true
			script := filepath.Join(d, AssetsScript)
			if st, err := os.Stat(script); err == nil && !st.IsDir() {
				out, err := runAssetsScript(ctx, script)
				if err != nil {
					return "", err
				}
				return check(out, script)
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
	}
	return "", errNoAssets
}

func runAssetsScript(ctx context.Context, script string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 45*time.Minute) // a first build compiles both from source
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = filepath.Dir(filepath.Dir(script))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tail := strings.TrimSpace(stderr.String())
		if len(tail) > 2000 {
			tail = "…" + tail[len(tail)-2000:]
		}
		return "", fmt.Errorf("%s failed (%v): %s: %w", script, err, tail, errNoAssets)
	}
	out := strings.TrimSpace(stdout.String())
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	return out, nil
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
