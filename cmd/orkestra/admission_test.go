package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/admission"
	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/envassets/envtesting"
	"github.com/orkspace/orkestra-cel/lifecycle/crdspec"
	"github.com/orkspace/orkestra-cel/operator"
	"github.com/orkspace/orkestra-cel/webhook"
	"github.com/orkspace/orkestra-cel/webhook/certs"
)

// rulesKatalog is a katalog of the admission test CRD with a deny rule on
// spec.image (a CRD validation rule), or without it.
func rulesKatalog(withRule bool) string {
	k := `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: platform}
spec:
  crds:
    platform:
      crdFile: ./crd.yaml
`
	if withRule {
		k += `      validation:
        rules:
          - field: spec.image
            prefix: "registry.internal/"
            message: images must come from registry.internal/
`
	}
	return k
}

// logLines collects log lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) add(prefix, args string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, prefix+" "+args)
}

func (l *logLines) grep(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

// startRun runs the operator on plan against cfg, as `orkestra run` does,
// until the returned stop is called.
func startRun(t *testing.T, cfg *rest.Config, plan *engine.Plan, logs *logLines) (stop func()) {
	t.Helper()
	dir := t.TempDir()
	_, certPEM, keyPEM, err := certs.NewSelfSigned([]string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	serving := webhook.DefaultConfig()
	serving.CertFile, serving.KeyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	for f, b := range map[string][]byte{serving.CertFile: certPEM, serving.KeyFile: keyPEM} {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	serving.WebhookAddr, serving.HTTPAddr = "127.0.0.1:0", ""
	serving.ShutdownTimeout = 2 * time.Second
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		err := runOperator(ctx, cfg, plan, serving, runFlags{gracefulShutdown: 2 * time.Second, skipNameValidation: true}, funcr.New(logs.add, funcr.Options{}))
		if err != nil {
			logs.add("ERROR", err.Error())
		}
		done <- err
	}()
	return func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("orkestra run: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("orkestra run did not stop")
		}
	}
}

// Issue 28: a deny rule removed from the katalog stayed in the CRD, and
// enforced, after `orkestra run` restarted without it. Now: the CRD is
// installed as `orkestra manifests | kubectl apply` installs it (the rule in
// it, and listed in admission.AnnotationRules); run starts with the rule;
// another field manager adds a rule of its own; run restarts with the rule
// removed from the katalog: the rule is gone (logged, and an event on the
// CRD), the bad object is admitted, and the other manager's rule is still
// enforced.
func TestRunConvergesCRDRulesToTheKatalog(t *testing.T) {
	cfg := envtesting.Start(t)
	scheme := operator.Scheme()
	_ = apiextensionsv1.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	dir := t.TempDir()
	crdYAML, err := os.ReadFile("../../admission/testdata/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	compileRules := func(withRule bool) *engine.Plan {
		t.Helper()
		for f, b := range map[string][]byte{"crd.yaml": crdYAML, "katalog.yaml": []byte(rulesKatalog(withRule))} {
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		plan, err := (&katalogFlags{files: []string{filepath.Join(dir, "katalog.yaml")}}).compile(&bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	withRule := compileRules(true)
	src := withRule.Entries[0].Source.CRD
	spec, _ := crdspec.Spec(withRule, src, apiextensionsv1.WebhookClientConfig{})
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: src.Object.Name, Annotations: crdspec.Annotations(withRule, src)}, Spec: spec}
	if err := c.Create(ctx, crd, client.FieldOwner("kubectl-client-side-apply")); err != nil {
		t.Fatal(err)
	}

	logs := &logLines{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("run's log:\n%s", strings.Join(logs.grep(""), "\n"))
		}
	})
	stop := startRun(t, cfg, withRule, logs)
	waitFor(t, "run to start", func() bool { return len(logs.grep("starting")) > 0 })
	waitRefused(t, c, platform("default", "bad", "docker.io/app"), "images must come from registry.internal/")
	// Another field manager adds a rule of its own (an update: a CRD's
	// versions are an atomic list, which a server-side apply replaces).
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, got); err != nil {
			return err
		}
		s := got.Spec.Versions[0].Schema.OpenAPIV3Schema
		s.XValidations = append(s.XValidations, apiextensionsv1.ValidationRule{Rule: "!self.spec.image.endsWith(':latest')", Message: "no latest tags (platform team)"})
		return c.Update(ctx, got, client.FieldOwner("platform-team"))
	})
	if err != nil {
		t.Fatal(err)
	}
	stop()

	// The restart, with the rule removed from the katalog.
	stop = startRun(t, cfg, compileRules(false), logs)
	defer stop()
	waitFor(t, "the bad object to be admitted", func() bool {
		err := c.Create(ctx, platform("default", "bad", "docker.io/app"))
		return err == nil
	})
	waitRefused(t, c, platform("default", "latest", "registry.internal/app:latest"), "no latest tags (platform team)")
	got := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, got); err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, r := range got.Spec.Versions[0].Schema.OpenAPIV3Schema.XValidations {
		rules = append(rules, r.Rule)
	}
	if want := "[!self.spec.image.endsWith(':latest')]"; fmt.Sprint(rules) != want {
		t.Errorf("the CRD's rules after the restart: %v, want %s", rules, want)
	}
	if lines := logs.grep("removed a CRD validation rule the katalog no longer declares"); len(lines) != 1 ||
		!strings.Contains(lines[0], `"rule"="self.?spec.?image.orValue('').startsWith('registry.internal/')"`) {
		t.Errorf("removal log lines: %q", lines)
	}
	if a, ok := got.Annotations[admission.AnnotationRules]; ok {
		t.Errorf("annotation %s = %s after the katalog dropped its rules, want none", admission.AnnotationRules, a)
	}
	waitFor(t, "the event on the CRD", func() bool {
		var evs eventsv1.EventList
		if err := c.List(ctx, &evs); err != nil {
			return false
		}
		for _, e := range evs.Items {
			if e.Reason == ReasonRuleRemoved && e.Regarding.Kind == "CustomResourceDefinition" && e.Regarding.Name == crd.Name &&
				strings.Contains(e.Note, "katalog platform no longer declares it") {
				return true
			}
		}
		return false
	})
}

func platform(ns, name, image string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "admission.example.io/v1", "kind": "Platform", "spec": map[string]any{"image": image}}}
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// waitRefused creates o until the API server refuses it with message (a
// CRD's new validation rules take effect shortly after the update).
func waitRefused(t *testing.T, c client.Client, o *unstructured.Unstructured, message string) {
	t.Helper()
	var err error
	waitFor(t, fmt.Sprintf("%s to be refused with %q", o.GetName(), message), func() bool {
		err = c.Create(t.Context(), o.DeepCopy())
		if err == nil {
			_ = c.Delete(t.Context(), o.DeepCopy())
		}
		return err != nil && strings.Contains(err.Error(), message)
	})
}
