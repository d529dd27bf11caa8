package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/conformance"
)

// An entry without crdFile is typed against the CRD the cluster serves when
// check is given --kubeconfig (upstream reads the schema from the cluster),
// against a --crd manifest, and runs untyped with one warning otherwise. The
// cluster is a real kube-apiserver.
func TestCheckReadsCRDsFromTheCluster(t *testing.T) {
	ctx := t.Context()
	env, err := conformance.StartEnvironment(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	crdFile := "../../examples/website/crd.yaml"
	installCRD(ctx, t, env, crdFile)
	kubeconfig := writeKubeconfig(t, env)

	dir := t.TempDir()
	katalogPath := filepath.Join(dir, "katalog.yaml")
	// spec.imagee is a typo the schema catches; the cluster's CRD is the
	// only source of that schema.
	body := `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: t}
spec:
  crds:
    site:
      apiTypes: {group: demo.orkestra.io, version: v1, kind: Website}
      operatorBox:
        onReconcile:
          configMaps:
            - data:
                image: "${self.spec.imagee}"
`
	if err := os.WriteFile(katalogPath, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	typo := `katalog.yaml:12:37: [site] operatorBox.onReconcile.configMaps[0].data.image: expression ${self.spec.imagee}: undefined field 'imagee'`

	_, stderr, code := run(t, "", "check", "-f", katalogPath, "--kubeconfig", kubeconfig)
	if code != 1 || !strings.Contains(stderr, typo) {
		t.Fatalf("--kubeconfig: exit %d, want the typo reported at %s\n%s", code, typo, stderr)
	}
	_, stderr, code = run(t, "", "check", "-f", katalogPath, "--crd", crdFile)
	if code != 1 || !strings.Contains(stderr, typo) {
		t.Fatalf("--crd: exit %d, want the typo reported\n%s", code, stderr)
	}
	stdout, stderr, code := run(t, "", "check", "-f", katalogPath)
	if code != 0 || strings.Count(stderr, "warning: [site] no schema for Website.demo.orkestra.io") != 1 || !strings.HasPrefix(stdout, "ok: ") {
		t.Fatalf("untyped: exit %d\n%s%s", code, stdout, stderr)
	}

	missing := strings.Replace(body, "kind: Website", "kind: Gadget", 1)
	if err := os.WriteFile(katalogPath, []byte(missing), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = run(t, "", "check", "-f", katalogPath, "--kubeconfig", kubeconfig)
	if code != 1 || !strings.Contains(stderr, "katalog.yaml:7:62: [site] apiTypes: the cluster has no CRD for kind Gadget in group demo.orkestra.io; apply it first, or add crdFile so that orkestra dev and manifests install it") {
		t.Fatalf("CRD not in the cluster: exit %d\n%s", code, stderr)
	}
}

func installCRD(ctx context.Context, t *testing.T, env *conformance.Environment, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	client, err := apiextensionsclient.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		got, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err == nil {
			for _, c := range got.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("CRD %s not established", crd.Name)
}

func writeKubeconfig(t *testing.T, env *conformance.Environment) string {
	t.Helper()
	cfg := env.Config
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, p); err != nil {
		t.Fatal(err)
	}
	return p
}
