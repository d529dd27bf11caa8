package e2e

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orkspace/orkestra-cel/controlplane"
	"github.com/orkspace/orkestra-cel/objfile"
)

// localKube starts a local control plane (no operator) for the DSL's tests.
func localKube(t *testing.T) *kube {
	t.Helper()
	assets, err := controlplane.FindAssets(t.Context(), "", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cp, err := controlplane.Start(t.Context(), assets, dir, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cp.Stop() })
	k, err := newKube(cp.Config, cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	k.noNodes = true
	return k
}

func mustApply(t *testing.T, k *kube, text string) {
	t.Helper()
	objs, err := objfile.Read(nil, strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if out, code := k.applyObjects(t.Context(), objs, ""); code != 0 {
		t.Fatal(out)
	}
}

const cmYAML = `apiVersion: v1
kind: ConfigMap
metadata: {name: probe, namespace: default, labels: {app: probe}}
data: {applied-by: kubectl-dsl, count: "3"}
`

// TestDSL exercises each kubectl subcommand natively against a real API
// server, as upstream's fixture pkg/e2e/fixture/e2e.yaml exercises kubectl.
func TestDSL(t *testing.T) {
	k := localKube(t)
	ctx := t.Context()
	mustApply(t, k, cmYAML)

	t.Run("get", func(t *testing.T) {
		cases := []struct {
			g    KGet
			want string
		}{
			{KGet{Target: Target{Kind: "ConfigMap", Name: "probe"}, Field: ".data.applied-by"}, "kubectl-dsl"},
			{KGet{Target: Target{Kind: "configmaps", Name: "probe"}, Field: "data.count"}, "3"}, // no leading dot: added
			{KGet{Target: Target{Kind: "cm", Name: "probe", Namespace: "default"}, Field: ".data.missing"}, ""},
			{KGet{Target: Target{Kind: "ConfigMap", Name: "probe"}, Field: `{.metadata.labels.app}`}, "probe"},
			{KGet{Target: Target{Kind: "ConfigMap", Name: "probe"}, Format: "json", Extract: Extract{JQ: ".data | keys | join(\",\")"}}, "applied-by,count"},
			{KGet{Target: Target{Kind: "configmaps.v1.", Name: "probe"}, Format: "yaml", Extract: Extract{YQ: ".data.count"}}, "3"},
			{KGet{Target: Target{Kind: "Namespace", Name: "default", Namespace: "ignored-for-cluster-scoped"}, Field: ".metadata.name"}, "default"},
		}
		for _, c := range cases {
			got, err := k.getOutput(ctx, &c.g)
			if err != nil || got != c.want {
				t.Errorf("%+v: got %q, %v; want %q", c.g, got, err, c.want)
			}
		}
		if _, err := k.getOutput(ctx, &KGet{Target: Target{Kind: "Gizmo", Name: "x"}, Field: ".a"}); err == nil || !strings.Contains(err.Error(), `serves no kind "Gizmo"`) {
			t.Errorf("unknown kind: %v", err)
		}
	})

	t.Run("apply patch delete", func(t *testing.T) {
		err := k.apply(ctx, &KApply{Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\ndata: {a: b}\n", Namespace: "kube-public", Assert: Assertions{Contains: ptr.To("configmap/extra serverside-applied")}}, "")
		if err != nil {
			t.Fatal(err)
		}
		// A refused apply is exit code 1 with the server's message.
		bad := &KApply{Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Not_Valid, namespace: default}\n", ExitCode: 1, Assert: Assertions{Contains: ptr.To("Invalid value")}}
		if err := k.apply(ctx, bad, ""); err != nil {
			t.Errorf("a refused apply asserted as exit code 1: %v", err)
		}
		bad.ExitCode = 0
		if err := k.apply(ctx, bad, ""); err == nil || !strings.Contains(err.Error(), "exit code 1, want 0") {
			t.Errorf("a refused apply expected to succeed: %v", err)
		}
		for _, p := range []*KPatch{
			{Target: Target{Kind: "ConfigMap", Name: "extra", Namespace: "kube-public"}, Patch: "data: {a: merged}"},
			{Target: Target{Kind: "ConfigMap", Name: "extra", Namespace: "kube-public"}, Type: "strategic", Patch: `{"data":{"s":"x"}}`},
			{Target: Target{Kind: "ConfigMap", Name: "extra", Namespace: "kube-public"}, Type: "json", Patch: `[{"op":"add","path":"/data/j","value":"y"}]`},
		} {
			if err := k.patch(ctx, p); err != nil {
				t.Fatalf("patch %s: %v", p.Type, err)
			}
		}
		got, _ := k.getOutput(ctx, &KGet{Target: Target{Kind: "ConfigMap", Name: "extra", Namespace: "kube-public"}, Format: "json", Extract: Extract{JQ: `.data | [.a, .s, .j] | join(",")`}})
		if got != "merged,x,y" {
			t.Errorf("after merge, strategic and json patches: %q", got)
		}
		file := filepath.Join(t.TempDir(), "cm.yaml")
		os.WriteFile(file, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: kube-public}\n"), 0o600)
		if err := k.delete(ctx, &KDelete{File: file}); err != nil {
			t.Fatal(err)
		}
		if err := k.checkResource(ctx, &ResourceCheck{Kind: "ConfigMap", Name: "extra", Namespace: "kube-public", Count: ptr.To(0)}); err != nil {
			t.Error(err)
		}
		if err := k.delete(ctx, &KDelete{File: file}); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("deleting what is gone without ignoreNotFound: %v", err)
		}
		if err := k.delete(ctx, &KDelete{File: file, IgnoreNotFound: true}); err != nil {
			t.Error(err)
		}
	})

	t.Run("resources", func(t *testing.T) {
		checks := []struct {
			c   ResourceCheck
			err string
		}{
			{ResourceCheck{Kind: "ConfigMap", Name: "probe"}, ""},
			{ResourceCheck{Kind: "ConfigMap", Name: "nope"}, "ConfigMap/nope: not found"},
			{ResourceCheck{Kind: "ConfigMap", Name: "probe", Count: ptr.To(0)}, "want none, 1 still exist (probe)"},
			{ResourceCheck{Kind: "Gizmo", Count: ptr.To(0)}, ""}, // a kind not served: nothing exists (upstream)
			{ResourceCheck{Kind: "ConfigMap", Namespace: "default", Count: ptr.To(5)}, "want 5, found"},
			{ResourceCheck{Kind: "ConfigMap", Name: "probe", Ready: true}, ""}, // no notion of readiness: ready once it exists
		}
		for _, c := range checks {
			err := k.checkResource(ctx, &c.c)
			if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Errorf("%+v: %v, want %q", c.c, err, c.err)
			}
		}
	})

	t.Run("events describe auth", func(t *testing.T) {
		cm, err := k.cs.CoreV1().ConfigMaps("default").Get(ctx, "probe", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "probe.1", Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Name: "probe", Namespace: "default", UID: cm.UID, APIVersion: "v1"},
			Reason:         "Probed", Message: "looked at it", Type: "Normal", LastTimestamp: metav1.Now()}
		if _, err := k.cs.CoreV1().Events("default").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		out, err := k.events(ctx, &KEvents{Target: Target{Kind: "cm", Name: "probe"}})
		if err != nil || !strings.Contains(out, "Normal   Probed   ConfigMap/probe   looked at it") {
			t.Errorf("events: %v\n%s", err, out)
		}
		out, err = k.describe(ctx, &KDescribe{Target: Target{Kind: "ConfigMap", LabelSelector: "app=probe"}})
		if err != nil || !strings.Contains(out, "Name:         probe") || !strings.Contains(out, "kubectl-dsl") || !strings.Contains(out, "Probed") {
			t.Errorf("describe: %v\n%s", err, out)
		}
		for _, c := range []struct {
			a    KAuth
			want string
		}{
			{KAuth{Verb: "delete", Resource: "deployments", Namespace: "default"}, "yes"},
			{KAuth{Verb: "get", Resource: "pods", Namespace: "default", As: "system:serviceaccount:default:nobody"}, "no"},
			{KAuth{Verb: "get", Resource: "pods/log", As: "system:serviceaccount:default:nobody"}, "no"},
		} {
			if got, err := k.auth(ctx, &c.a); err != nil || got != c.want {
				t.Errorf("auth can-i %+v: %q, %v; want %s", c.a, got, err, c.want)
			}
		}
	})

	t.Run("containers cannot run here", func(t *testing.T) {
		for name, f := range map[string]func() error{
			"logs": func() error { _, err := k.logs(ctx, &KLogs{Target: Target{LabelSelector: "app=x"}}); return err },
			"exec": func() error {
				_, err := k.exec(ctx, &KExec{Target: Target{Name: "p"}, Command: []string{"true"}})
				return err
			},
			"cp":  func() error { _, err := k.cp(ctx, &KCp{Target: Target{Name: "p"}, Src: "/x"}); return err },
			"top": func() error { _, err := k.top(ctx, &KTop{Target: Target{Kind: "pod"}}); return err },
			"port-forward to a service": func() error {
				return k.portForward(ctx, &KPortForward{Service: "web", Port: 80, Path: "/", Method: "GET"}, false).err
			},
		} {
			if r := skipReason(f()); !strings.Contains(r, "no container runs on the local control plane") {
				t.Errorf("%s: want skipped, got %q", name, r)
			}
		}
	})

	t.Run("port-forward to the runtime", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/katalog/website" {
				http.NotFound(w, r)
				return
			}
			w.Write([]byte(`{"name":"website","healthy":true,"auth":"` + r.Header.Get("Authorization") + `","method":"` + r.Method + `"}`))
		}))
		defer srv.Close()
		k.runtimeHTTP = strings.TrimPrefix(srv.URL, "http://")
		defer func() { k.runtimeHTTP = "" }()
		t.Setenv("E2E_TOKEN", "s3cret")
		lease := &LeaseRef{Lease: "orkestra-konductor"}
		ok := []*KPortForward{
			{Target: Target{Namespace: "orkestra-system", Lease: lease}, Port: 8080, Path: "/katalog/website", Method: "GET", Extract: Extract{JQ: "name"}, Assert: Assertions{Equals: ptr.To("website")}},
			{Service: "orkestra", Target: Target{Namespace: "orkestra-system"}, Port: 8080, Path: "/katalog/website", Method: "POST", Headers: map[string]string{"Authorization": "Bearer ${E2E_TOKEN}"}, Extract: Extract{JQ: ".auth + \" \" + .method"}, Assert: Assertions{Equals: ptr.To("Bearer s3cret POST")}},
			{Service: "orkestra", Target: Target{Namespace: "orkestra-system"}, Port: 8080, Path: "/katalog/payment/health", Method: "GET", StatusCode: 404},
		}
		for _, p := range ok {
			if r := k.portForward(ctx, p, false); r.err != nil || !strings.Contains(r.target, "the runtime (in process") {
				t.Errorf("%+v: %v (%s)", p, r.err, r.target)
			}
		}
		bad := &KPortForward{Service: "orkestra", Target: Target{Namespace: "orkestra-system"}, Port: 8080, Path: "/katalog/website", Method: "GET", StatusCode: 200}
		bad.Path = "/nope"
		if r := k.portForward(ctx, bad, false); r.err == nil || !strings.Contains(r.err.Error(), "status 404, want 200") {
			t.Errorf("wrong status: %v", r.err)
		}
	})

	t.Run("lease holder", func(t *testing.T) {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "leader", Namespace: "default"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("pod-7_3f2a")}}
		if _, err := k.cs.CoordinationV1().Leases("default").Create(ctx, l, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pod, ns, err := k.leaseHolder(ctx, &LeaseRef{Lease: "leader"}, "")
		if err != nil || pod != "pod-7" || ns != "default" {
			t.Errorf("holder %q in %q: %v", pod, ns, err)
		}
	})

	t.Run("rollout without ready", func(t *testing.T) {
		mustApply(t, k, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`)
		if err := k.rollout(ctx, &KRollout{Target: Target{Kind: "Deployment", Name: "web"}, Replicas: ptr.To(4)}); err != nil {
			t.Fatal(err)
		}
		if err := k.rollout(ctx, &KRollout{Target: Target{Kind: "deploy", Name: "web"}}); err != nil {
			t.Fatal(err)
		}
		got, _ := k.getOutput(ctx, &KGet{Target: Target{Kind: "Deployment", Name: "web"}, Format: "json", Extract: Extract{JQ: `"\(.spec.replicas) \(.spec.template.metadata.annotations | has("kubectl.kubernetes.io/restartedAt"))"`}})
		if got != "4 true" {
			t.Errorf("scaled and restarted: %q", got)
		}
		// Nothing makes it ready here (no simulation in this test): a
		// rollout waiting for it times out, saying what it saw.
		short, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		err := k.rollout(short, &KRollout{Target: Target{Kind: "Deployment", Name: "web"}, Replicas: ptr.To(2), Ready: true})
		if err == nil || !strings.Contains(err.Error(), "did not roll out") {
			t.Errorf("rollout with ready: %v", err)
		}
	})
}

// TestCommand: sh -c in the expectation's directory with KUBECONFIG set;
// exit code and output asserted; a program missing from PATH skips.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "here.txt"), []byte("x"), 0o600)
	k := &kube{kubeconfig: "/the/kubeconfig"}
	ctx := t.Context()
	cases := []struct {
		c    Command
		err  string
		skip bool
	}{
		{Command{Run: `echo "$KUBECONFIG"; test -f here.txt`, Assert: Assertions{Equals: ptr.To("/the/kubeconfig")}}, "", false},
		{Command{Run: "exit 3", ExitCode: 3}, "", false},
		{Command{Run: "echo denied the request >&2; exit 1", ExitCode: 1, Assert: Assertions{Contains: ptr.To("denied the request")}}, "", false},
		{Command{Run: "exit 1"}, "exit code 1, want 0", false},
		{Command{Run: "echo 3", Assert: Assertions{GT: ptr.To(5.0)}}, "greaterThan 5: got 3", false},
		{Command{Run: "no-such-tool-xyz get pods"}, "needs no-such-tool-xyz, which is not on PATH", true},
	}
	for _, c := range cases {
		err := k.checkCommand(ctx, &c.c, dir)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.c.Run, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v, want %q", c.c.Run, err, c.err)
		case c.skip != (skipReason(err) != ""):
			t.Errorf("%q: skipped %v, want %v", c.c.Run, skipReason(err) != "", c.skip)
		}
	}
}
