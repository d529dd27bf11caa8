package certs

import (
	"crypto/x509"
	"net"
	"testing"
	"time"
)

func testPolicy() Policy {
	return Policy{
		DNSNames:         []string{"orkestra.ns.svc"},
		IPs:              []net.IP{net.ParseIP("127.0.0.1")},
		CAValidity:       600 * day,
		CertValidity:     300 * day,
		CARenewBefore:    200 * day,
		CertRenewBefore:  100 * day,
		CAPromotionDelay: time.Hour,
	}
}

const day = 24 * time.Hour

// verify checks that the serving certificate chains to the bundle at t for
// the policy's names, as an API server would.
func verify(t *testing.T, data map[string][]byte, p Policy, at time.Time) *x509.Certificate {
	t.Helper()
	leaf := parseCerts(data[KeyTLSCert])
	if len(leaf) != 1 {
		t.Fatalf("tls.crt holds %d certificates, want 1", len(leaf))
	}
	if parseKeyPair(data[KeyTLSCert], data[KeyTLSKey]) == nil {
		t.Fatal("tls.crt and tls.key do not match")
	}
	roots := x509.NewCertPool()
	for _, c := range parseCerts(data[KeyCABundle]) {
		roots.AddCert(c)
	}
	for _, name := range p.DNSNames {
		if _, err := leaf[0].Verify(x509.VerifyOptions{DNSName: name, Roots: roots, CurrentTime: at}); err != nil {
			t.Fatalf("serving certificate does not verify for %s at %s: %v", name, at, err)
		}
	}
	for _, ip := range p.IPs {
		if _, err := leaf[0].Verify(x509.VerifyOptions{DNSName: ip.String(), Roots: roots, CurrentTime: at}); err != nil {
			t.Fatalf("serving certificate does not verify for %s: %v", ip, err)
		}
	}
	return leaf[0]
}

func mustReconcile(t *testing.T, data map[string][]byte, ann map[string]string, p Policy, now time.Time, trusted func([]byte) bool) Reconciled {
	t.Helper()
	r, err := Reconcile(data, ann, p, now, trusted)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestReconcileLifecycle(t *testing.T) {
	p := testPolicy()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

	// A new Secret: CA, serving certificate, bundle = CA.
	r := mustReconcile(t, nil, nil, p, t0, nil)
	if !r.Changed {
		t.Fatal("a new Secret must be created")
	}
	s1 := verify(t, r.Data, p, t0)
	ca1 := parseCerts(r.Data[KeyCACert])[0]
	if got := parseCerts(r.Data[KeyCABundle]); len(got) != 1 || !got[0].Equal(ca1) {
		t.Fatalf("bundle = %d certs, want the CA only", len(got))
	}

	// Valid: nothing to do.
	again := mustReconcile(t, r.Data, r.Annotations, p, t0.Add(150*day), nil)
	if again.Changed {
		t.Fatalf("a valid Secret changed: %v", again.Reasons)
	}

	// A third of the serving lifetime left: reissued by the same CA, the
	// bundle unchanged (nothing to re-inject).
	t1 := t0.Add(201 * day)
	r2 := mustReconcile(t, r.Data, r.Annotations, p, t1, nil)
	if !r2.Changed {
		t.Fatal("serving certificate not renewed with a third of its lifetime left")
	}
	s2 := verify(t, r2.Data, p, t1)
	if s2.Equal(s1) || string(r2.Data[KeyCABundle]) != string(r.Data[KeyCABundle]) || string(r2.Data[KeyCACert]) != string(r.Data[KeyCACert]) {
		t.Fatal("renewal must reissue the serving certificate only")
	}

	// A new name to cover (the Service was renamed): reissued.
	p2 := p
	p2.DNSNames = append([]string{"other.ns.svc"}, p.DNSNames...)
	r3 := mustReconcile(t, r2.Data, r2.Annotations, p2, t1, nil)
	if !r3.Changed {
		t.Fatal("a certificate that does not cover a required name must be reissued")
	}
	verify(t, r3.Data, p2, t1)

	// The CA has less than a third left: the next CA is staged in the
	// bundle; the serving certificate is still signed by the old CA.
	t2 := t0.Add(401 * day)
	r4 := mustReconcile(t, r3.Data, r3.Annotations, p2, t2, nil)
	if r4.Annotations[AnnotationNextCASince] == "" || len(r4.Data[KeyNextCACert]) == 0 {
		t.Fatalf("next CA not staged: %v", r4.Reasons)
	}
	if got := parseCerts(r4.Data[KeyCABundle]); len(got) != 2 {
		t.Fatalf("bundle holds %d CAs while a next CA is staged, want 2", len(got))
	}
	leaf := verify(t, r4.Data, p2, t2)
	if leaf.CheckSignatureFrom(ca1) != nil {
		t.Fatal("the serving certificate must stay signed by the current CA until the next one is promoted")
	}

	// Not promoted before the delay, nor while a CRD does not trust it.
	if r := mustReconcile(t, r4.Data, r4.Annotations, p2, t2.Add(time.Minute), nil); r.Changed {
		t.Fatalf("promoted before CAPromotionDelay: %v", r.Reasons)
	}
	distrust := func([]byte) bool { return false }
	if r := mustReconcile(t, r4.Data, r4.Annotations, p2, t2.Add(2*time.Hour), distrust); r.Changed {
		t.Fatalf("promoted while a CRD does not trust the next CA: %v", r.Reasons)
	}

	// Promoted: the new CA signs, the old one stays in the bundle.
	t3 := t2.Add(2 * time.Hour)
	var asked []byte
	r5 := mustReconcile(t, r4.Data, r4.Annotations, p2, t3, func(b []byte) bool { asked = b; return true })
	if string(asked) != string(r4.Data[KeyNextCACert]) {
		t.Fatal("the trust check must be asked about the staged CA")
	}
	ca2 := parseCerts(r4.Data[KeyNextCACert])[0]
	leaf = verify(t, r5.Data, p2, t3)
	if leaf.CheckSignatureFrom(ca2) != nil {
		t.Fatal("after promotion the serving certificate must be signed by the new CA")
	}
	if _, ok := r5.Annotations[AnnotationNextCASince]; ok || len(r5.Data[KeyNextCACert]) != 0 {
		t.Fatal("promotion must clear the staged CA")
	}
	bundle := parseCerts(r5.Data[KeyCABundle])
	if len(bundle) != 2 || !bundle[0].Equal(ca2) || !bundle[1].Equal(ca1) {
		t.Fatal("after promotion the bundle must be [new CA, old CA]")
	}
	// An old replica still serving the old CA's certificate verifies.
	verify(t, r4.Data, p2, t3)

	// Once the old CA expired it leaves the bundle.
	t4 := ca1.NotAfter.Add(time.Minute)
	r6 := mustReconcile(t, r5.Data, r5.Annotations, p2, t4, nil)
	if got := parseCerts(r6.Data[KeyCABundle]); len(got) != 1 || !got[0].Equal(ca2) {
		t.Fatalf("expired CA kept in the bundle (%d certs)", len(got))
	}
	verify(t, r6.Data, p2, t4)
}

func TestReconcileRepairsBrokenSecrets(t *testing.T) {
	p := testPolicy()
	now := time.Now()
	good := mustReconcile(t, nil, nil, p, now, nil)
	cases := map[string]map[string][]byte{
		"garbage CA": {KeyCACert: []byte("nope"), KeyCAKey: []byte("nope")},
		"mismatched serving key": {
			KeyCACert: good.Data[KeyCACert], KeyCAKey: good.Data[KeyCAKey], KeyCABundle: good.Data[KeyCABundle],
			KeyTLSCert: good.Data[KeyTLSCert], KeyTLSKey: mustReconcile(t, nil, nil, p, now, nil).Data[KeyTLSKey],
		},
		"serving certificate of another CA": {
			KeyCACert: good.Data[KeyCACert], KeyCAKey: good.Data[KeyCAKey], KeyCABundle: good.Data[KeyCABundle],
			KeyTLSCert: mustReconcile(t, nil, nil, p, now, nil).Data[KeyTLSCert], KeyTLSKey: good.Data[KeyTLSKey],
		},
		"no bundle": {
			KeyCACert: good.Data[KeyCACert], KeyCAKey: good.Data[KeyCAKey],
			KeyTLSCert: good.Data[KeyTLSCert], KeyTLSKey: good.Data[KeyTLSKey],
		},
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			r := mustReconcile(t, data, nil, p, now, nil)
			if !r.Changed {
				t.Fatal("not repaired")
			}
			verify(t, r.Data, p, now)
		})
	}
	// An expired CA is replaced outright.
	r := mustReconcile(t, good.Data, nil, p, now.Add(700*day), nil)
	if !r.Changed || string(r.Data[KeyCACert]) == string(good.Data[KeyCACert]) {
		t.Fatal("an expired CA must be replaced")
	}
	verify(t, r.Data, p, now.Add(700*day))
}

func TestBundleContains(t *testing.T) {
	p := testPolicy()
	a := mustReconcile(t, nil, nil, p, time.Now(), nil)
	b := mustReconcile(t, nil, nil, p, time.Now(), nil)
	both := append(append([]byte{}, a.Data[KeyCACert]...), b.Data[KeyCACert]...)
	if !BundleContains(both, a.Data[KeyCACert]) || !BundleContains(both, b.Data[KeyCACert]) {
		t.Fatal("a bundle must contain its certificates")
	}
	if BundleContains(a.Data[KeyCACert], b.Data[KeyCACert]) || BundleContains(both, nil) {
		t.Fatal("false positive")
	}
}
