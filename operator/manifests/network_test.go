package manifests_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/orkestra-cel/operator/manifests"
)

func caPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "apiserver-client-ca"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func object(t *testing.T, us []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, u := range us {
		if u.GetKind() == kind && (name == "" || u.GetName() == name) {
			return u
		}
	}
	t.Fatalf("no %s %s", kind, name)
	return nil
}

// Issue 15 item 6: the install admitted any pod to any port and /convert
// took no client certificate. A NetworkPolicy admits the webhook and
// metrics ports only; --webhook-client-ca ships the CA and makes /convert
// require a certificate it signed.
func TestNetworkPolicyAndClientCA(t *testing.T) {
	plan := websitePlan(t)
	_, us := generate(t, plan, manifests.Options{})
	np := object(t, us, "NetworkPolicy", "orkestra")
	spec := np.Object["spec"].(map[string]any)
	wantIngress := []any{map[string]any{"ports": []any{
		map[string]any{"port": "webhook", "protocol": "TCP"},
		map[string]any{"port": "http", "protocol": "TCP"},
	}}}
	if !reflect.DeepEqual(spec["ingress"], wantIngress) || !reflect.DeepEqual(spec["policyTypes"], []any{"Ingress"}) {
		t.Errorf("NetworkPolicy spec %v", spec)
	}
	if sel := spec["podSelector"].(map[string]any)["matchLabels"]; !reflect.DeepEqual(sel, map[string]any{"app.kubernetes.io/instance": "orkestra", "app.kubernetes.io/name": "orkestra"}) {
		t.Errorf("podSelector %v", sel)
	}
	if strings.Contains(fmtArgs(t, us), "--client-ca") {
		t.Error("--client-ca without --webhook-client-ca")
	}

	ca := caPEM(t)
	_, us = generate(t, plan, manifests.Options{ClientCA: ca})
	cm := object(t, us, "ConfigMap", "orkestra-webhook-client-ca")
	if cm.Object["data"].(map[string]any)["ca.crt"] != string(ca) {
		t.Error("the client CA ConfigMap does not hold the bundle")
	}
	if !strings.Contains(fmtArgs(t, us), "--client-ca="+manifests.ClientCAMountPath+"/ca.crt") {
		t.Errorf("args %s", fmtArgs(t, us))
	}
	pod := object(t, us, "Deployment", "orkestra").Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	if !strings.Contains(toJSON(t, pod["volumes"]), `"name":"orkestra-webhook-client-ca"`) || !strings.Contains(toJSON(t, pod["containers"]), `"mountPath":"`+manifests.ClientCAMountPath+`"`) {
		t.Errorf("volumes %s", toJSON(t, pod["volumes"]))
	}

	for bad, want := range map[string]string{
		"\n":    "--webhook-client-ca: no PEM certificate in the file",
		"hello": "--webhook-client-ca: the file holds something other than PEM certificates",
		"-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n": "--webhook-client-ca: a PEM block of type RSA PRIVATE KEY; give CA certificates only",
	} {
		if _, err := manifests.Generate(plan, manifests.Options{ClientCA: []byte(bad)}); err == nil || err.Error() != want {
			t.Errorf("bundle %q: %v, want %s", bad, err, want)
		}
	}
}

func fmtArgs(t *testing.T, us []*unstructured.Unstructured) string {
	t.Helper()
	c := object(t, us, "Deployment", "").Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	return toJSON(t, c["args"])
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
