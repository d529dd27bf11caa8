package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"slices"
	"sort"
	"time"
)

// Keys of the certificate Secret. tls.crt and tls.key make it a valid
// kubernetes.io/tls Secret; the rest is what every replica needs to agree on
// the CA and its rotation.
const (
	// KeyTLSCert and KeyTLSKey are the serving certificate and its key (PEM).
	KeyTLSCert = "tls.crt"
	KeyTLSKey  = "tls.key"
	// KeyCACert and KeyCAKey are the CA that signs the serving certificate.
	KeyCACert = "ca.crt"
	KeyCAKey  = "ca.key"
	// KeyCABundle is what goes into the CRDs' conversion caBundle: the CA,
	// a staged next CA, and earlier CAs until they expire.
	KeyCABundle = "ca-bundle.crt"
	// KeyNextCACert and KeyNextCAKey hold a CA staged for rotation: it is in
	// the bundle but signs nothing yet.
	KeyNextCACert = "next-ca.crt"
	KeyNextCAKey  = "next-ca.key"
)

// AnnotationNextCASince records (RFC 3339) when the next CA was staged.
const AnnotationNextCASince = "orkestra.orkspace.io/next-ca-since"

// clockSkew back-dates NotBefore so that a certificate is valid at once on a
// node whose clock is slightly behind.
const clockSkew = 5 * time.Minute

// keyPair is a parsed certificate with its key and their PEM forms.
type keyPair struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
	keyPEM  []byte
}

// newCA creates a self-signed CA valid for validity from now.
func newCA(now time.Time, validity time.Duration) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: fmt.Sprintf("orkestra-webhook-ca@%d", now.Unix()), Organization: []string{"orkestra"}},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	return sign(tmpl, tmpl, key, key)
}

// newServing issues a serving certificate for the names and addresses,
// signed by ca, valid for validity from now but never beyond the CA.
func newServing(ca *keyPair, now time.Time, validity time.Duration, dnsNames []string, ips []net.IP) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	notAfter := now.Add(validity)
	if notAfter.After(ca.cert.NotAfter) {
		notAfter = ca.cert.NotAfter
	}
	cn := "orkestra-webhook"
	if len(dnsNames) > 0 {
		cn = dnsNames[0]
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"orkestra"}},
		NotBefore:    now.Add(-clockSkew),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     dnsNames,
		IPAddresses:  ips,
	}
	return sign(tmpl, ca.cert, key, ca.key)
}

func sign(tmpl, parent *x509.Certificate, key crypto.Signer, parentKey crypto.Signer) (*keyPair, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &keyPair{
		cert:    cert,
		key:     key,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

func serialNumber() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

// parseKeyPair parses a PEM certificate and key that belong together; nil
// when either is missing or they do not match.
func parseKeyPair(certPEM, keyPEM []byte) *keyPair {
	certs := parseCerts(certPEM)
	if len(certs) == 0 || len(keyPEM) == 0 {
		return nil
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil
	}
	var key crypto.Signer
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		key, _ = k.(crypto.Signer)
	} else if k, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
		key = k
	} else if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		key = k
	}
	if key == nil {
		return nil
	}
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(certs[0].PublicKey) {
		return nil
	}
	return &keyPair{cert: certs[0], key: key, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certs[0].Raw}), keyPEM: keyPEM}
}

// parseCerts returns every certificate in a PEM bundle, skipping what does
// not parse.
func parseCerts(data []byte) []*x509.Certificate {
	var out []*x509.Certificate
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return out
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		if c, err := x509.ParseCertificate(block.Bytes); err == nil {
			out = append(out, c)
		}
	}
}

func encodeCerts(certs []*x509.Certificate) []byte {
	var b bytes.Buffer
	for _, c := range certs {
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return b.Bytes()
}

// BundleContains reports whether the PEM bundle holds every certificate of
// the PEM certs.
func BundleContains(bundle, certs []byte) bool {
	have := parseCerts(bundle)
	want := parseCerts(certs)
	if len(want) == 0 {
		return false
	}
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h *x509.Certificate) bool { return h.Equal(w) }) {
			return false
		}
	}
	return true
}

// Policy is what a certificate Secret must satisfy.
type Policy struct {
	// DNSNames and IPs the serving certificate must cover.
	DNSNames []string
	IPs      []net.IP
	// CAValidity and CertValidity are the lifetimes of new certificates.
	CAValidity, CertValidity time.Duration
	// CARenewBefore: stage the next CA when the CA expires within it.
	// CertRenewBefore: reissue the serving certificate when it expires
	// within it.
	CARenewBefore, CertRenewBefore time.Duration
	// CAPromotionDelay is how long a staged CA stays in the bundle before it
	// signs the serving certificate, so that every API server trusts it
	// first.
	CAPromotionDelay time.Duration
}

// Reconciled is the result of Reconcile.
type Reconciled struct {
	Data        map[string][]byte
	Annotations map[string]string
	// Changed is false when the Secret already satisfies the policy.
	Changed bool
	// Reasons say what changed, for the log.
	Reasons []string
}

// Reconcile returns the Secret data that satisfies p at now, starting from
// data and annotations (both may be nil: a new Secret). nextTrusted reports
// whether every CRD's caBundle already holds the staged CA (PEM); a staged
// CA is promoted only then. It is a pure function of its inputs but for the
// keys it generates.
func Reconcile(data map[string][]byte, annotations map[string]string, p Policy, now time.Time, nextTrusted func(nextCA []byte) bool) (Reconciled, error) {
	out := Reconciled{Data: map[string][]byte{}, Annotations: map[string]string{}}
	for k, v := range annotations {
		out.Annotations[k] = v
	}
	ca := parseKeyPair(data[KeyCACert], data[KeyCAKey])
	if ca != nil && (!ca.cert.IsCA || !now.Before(ca.cert.NotAfter)) {
		ca = nil
	}
	if ca == nil {
		fresh, err := newCA(now, p.CAValidity)
		if err != nil {
			return out, err
		}
		serving, err := newServing(fresh, now, p.CertValidity, p.DNSNames, p.IPs)
		if err != nil {
			return out, err
		}
		delete(out.Annotations, AnnotationNextCASince)
		out.Data = map[string][]byte{
			KeyCACert:   fresh.certPEM,
			KeyCAKey:    fresh.keyPEM,
			KeyTLSCert:  serving.certPEM,
			KeyTLSKey:   serving.keyPEM,
			KeyCABundle: fresh.certPEM,
		}
		out.Changed = true
		out.Reasons = []string{"created a CA and a serving certificate (none valid was stored)"}
		return out, nil
	}
	serving := parseKeyPair(data[KeyTLSCert], data[KeyTLSKey])
	next := parseKeyPair(data[KeyNextCACert], data[KeyNextCAKey])
	if next != nil && (!next.cert.IsCA || !now.Before(next.cert.NotAfter)) {
		next = nil
	}
	var reasons []string
	previous := parseCerts(data[KeyCABundle])

	// Stage a next CA in the bundle well before the CA expires.
	if next == nil && ca.cert.NotAfter.Sub(now) < p.CARenewBefore {
		n, err := newCA(now, p.CAValidity)
		if err != nil {
			return out, err
		}
		next = n
		out.Annotations[AnnotationNextCASince] = now.UTC().Format(time.RFC3339)
		reasons = append(reasons, fmt.Sprintf("the CA expires at %s: staged the next CA in the CA bundle", ca.cert.NotAfter.UTC().Format(time.RFC3339)))
	}
	// Promote the staged CA once every API server had time to trust it.
	if next != nil {
		since, err := time.Parse(time.RFC3339, out.Annotations[AnnotationNextCASince])
		if err != nil {
			since = now
			out.Annotations[AnnotationNextCASince] = now.UTC().Format(time.RFC3339)
		}
		if !now.Before(since.Add(p.CAPromotionDelay)) && (nextTrusted == nil || nextTrusted(next.certPEM)) {
			previous = append(previous, ca.cert)
			ca, next, serving = next, nil, nil
			delete(out.Annotations, AnnotationNextCASince)
			reasons = append(reasons, "promoted the staged CA; it signs the serving certificate from now on")
		}
	}
	switch why := servingProblem(serving, ca, p, now); {
	case why != "":
		s, err := newServing(ca, now, p.CertValidity, p.DNSNames, p.IPs)
		if err != nil {
			return out, err
		}
		serving = s
		reasons = append(reasons, "issued a new serving certificate: "+why)
	}

	// The bundle: the CA, the staged CA, then earlier CAs until they expire.
	bundle := []*x509.Certificate{ca.cert}
	if next != nil {
		bundle = append(bundle, next.cert)
	}
	var earlier []*x509.Certificate
	for _, c := range previous {
		if c.IsCA && now.Before(c.NotAfter) && !slices.ContainsFunc(bundle, c.Equal) && !slices.ContainsFunc(earlier, c.Equal) {
			earlier = append(earlier, c)
		}
	}
	sort.SliceStable(earlier, func(i, j int) bool { return earlier[i].NotAfter.After(earlier[j].NotAfter) })
	bundle = append(bundle, earlier...)

	out.Data = map[string][]byte{
		KeyCACert:   ca.certPEM,
		KeyCAKey:    ca.keyPEM,
		KeyTLSCert:  serving.certPEM,
		KeyTLSKey:   serving.keyPEM,
		KeyCABundle: encodeCerts(bundle),
	}
	if next != nil {
		out.Data[KeyNextCACert] = next.certPEM
		out.Data[KeyNextCAKey] = next.keyPEM
	} else {
		delete(out.Annotations, AnnotationNextCASince)
	}
	out.Reasons = reasons
	out.Changed = !equalData(data, out.Data) || !equalStrings(annotations, out.Annotations)
	if out.Changed && len(out.Reasons) == 0 {
		out.Reasons = []string{"normalised the stored certificates"}
	}
	return out, nil
}

// servingProblem says why the serving certificate must be reissued, or "".
func servingProblem(s, ca *keyPair, p Policy, now time.Time) string {
	switch {
	case s == nil:
		return "none valid was stored"
	case s.cert.CheckSignatureFrom(ca.cert) != nil:
		return "it is not signed by the current CA"
	case !now.Before(s.cert.NotAfter.Add(-p.CertRenewBefore)):
		return fmt.Sprintf("it expires at %s", s.cert.NotAfter.UTC().Format(time.RFC3339))
	}
	for _, n := range p.DNSNames {
		if !slices.Contains(s.cert.DNSNames, n) {
			return fmt.Sprintf("it does not cover the name %s", n)
		}
	}
	for _, ip := range p.IPs {
		if !slices.ContainsFunc(s.cert.IPAddresses, ip.Equal) {
			return fmt.Sprintf("it does not cover the address %s", ip)
		}
	}
	return ""
}

func equalData(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

func equalStrings(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			return false
		}
	}
	return true
}

// NewSelfSigned returns a CA (PEM) and a serving certificate and key it
// signed for the names and addresses, valid for validity: for a local
// webhook (`orkestra dev`, tests).
func NewSelfSigned(dnsNames []string, ips []net.IP, validity time.Duration) (caPEM, certPEM, keyPEM []byte, err error) {
	now := time.Now()
	ca, err := newCA(now, validity)
	if err != nil {
		return nil, nil, nil, err
	}
	s, err := newServing(ca, now, validity, dnsNames, ips)
	if err != nil {
		return nil, nil, nil, err
	}
	return ca.certPEM, s.certPEM, s.keyPEM, nil
}

// errNoCert is returned when a Secret holds no usable serving certificate.
var errNoCert = errors.New("the certificate Secret holds no valid tls.crt and tls.key")
