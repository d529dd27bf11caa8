package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/controlplane"
	"github.com/orkspace/orkestra-cel/katalogapi"
	"github.com/orkspace/orkestra-cel/lifecycle/storage"
	"github.com/orkspace/orkestra-cel/lifecycle/versions"
)

// withDev runs `orkestra dev` on the website example (its crFiles apply two
// Websites, hello and shop) and calls f once it runs; the session stops
// when f returns.
func withDev(t *testing.T, migration bool, f func(s *devSession)) {
	t.Helper()
	plan, err := (&katalogFlags{files: []string{websiteKatalog}}).compile(&bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	port, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout, stderr syncBuffer
	ready := false
	done := make(chan error, 1)
	go func() {
		done <- runDev(ctx, &stdout, &stderr, plan, []string{"../../examples/website/website-v1alpha1.yaml"},
			devFlags{httpAddr: fmt.Sprintf("127.0.0.1:%d", port), storageMigration: migration}, testr.New(t), func(s *devSession) {
				ready = true
				f(s)
				cancel()
			})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("orkestra dev: %v\nstderr:\n%s", err, stderr.String())
		}
	case <-time.After(5 * time.Minute):
		t.Fatal("orkestra dev did not finish")
	}
	if !ready {
		t.Fatalf("the session never became ready; stderr:\n%s", stderr.String())
	}
}

// setStorage makes v the storage version of the website CRD, once the
// operator has reconciled both Websites (so that no status write races the
// migration the tests count).
func setStorage(s *devSession, v string) error {
	if err := waitReconciled(s); err != nil {
		return err
	}
	ext, err := apiextensionsclient.NewForConfig(s.cfg)
	if err != nil {
		return err
	}
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd, err := crds.Get(context.Background(), "websites.demo.orkestra.io", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i := range crd.Spec.Versions {
			crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == v
		}
		_, err = crds.Update(context.Background(), crd, metav1.UpdateOptions{})
		return err
	})
}

func waitReconciled(s *devSession) error {
	dyn, err := dynamic.NewForConfig(s.cfg)
	if err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Group: "demo.orkestra.io", Version: "v1", Resource: "websites"}
	return wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, name := range []string{"hello", "shop"} {
			o, err := dyn.Resource(gvr).Namespace("default").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			if g, _, _ := unstructured.NestedInt64(o.Object, "status", "observedGeneration"); g != o.GetGeneration() {
				return false, nil
			}
		}
		return true, nil
	})
}

// TestDevMigratesStorage: under `orkestra dev` (as under `orkestra run`),
// making v1alpha1 the storage version starts a migration of the sample,
// and /katalog/{crd} reports it done.
func TestDevMigratesStorage(t *testing.T) {
	var got katalogapi.KatalogEntry
	var last string
	var stepErr error
	withDev(t, true, func(s *devSession) {
		if stepErr = setStorage(s, "v1alpha1"); stepErr != nil {
			return
		}
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			resp, err := http.Get("http://" + s.httpAddr + "/katalog/website-v1")
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				last = string(b)
				got = katalogapi.KatalogEntry{}
				if json.Unmarshal(b, &got) == nil && got.Storage != nil && slices.Equal(got.Storage.StoredVersions, []string{"v1alpha1"}) && !got.Storage.Migrating {
					return
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	if stepErr != nil {
		t.Fatal(stepErr)
	}
	st := got.Storage
	if st == nil || !slices.Equal(st.StoredVersions, []string{"v1alpha1"}) || st.Migrating || st.Migrated != 2 || st.Remaining == nil || *st.Remaining != 0 || st.LastError != "" {
		t.Fatalf("/katalog/website-v1 storage = %+v, want storedVersions [v1alpha1], 2 migrated, 0 remaining, no error; last answer:\n%s", st, last)
	}
	if !strings.Contains(last, `"storage": {`) || !strings.Contains(last, `"lastError": ""`) {
		t.Errorf("the JSON does not spell the storage object as documented:\n%s", last)
	}
}

// TestStorageAndVersionsCommands drives `orkestra versions` and `orkestra
// storage migrate` against a dev control plane whose operator does not
// migrate (--storage-migration=false).
func TestStorageAndVersionsCommands(t *testing.T) {
	type result struct{ out, err string }
	res := map[string]result{}
	codes := map[string]int{}
	var stepErr error
	var katalogAnswer string
	withDev(t, false, func(s *devSession) {
		cli := func(name string, args ...string) {
			o, e, c := run(t, "", args...)
			res[name], codes[name] = result{o, e}, c
		}
		metrics := "http://" + s.httpAddr + "/metrics"
		cli("versions json", "versions", "-f", website, "--kubeconfig", s.kubeconfig, "-o", "json", "--metrics-url", metrics)
		cli("versions text", "versions", "-f", website, "--kubeconfig", s.kubeconfig, "--metrics-url", metrics)
		cli("versions no operator", "versions", "-f", website, "--kubeconfig", s.kubeconfig)
		if stepErr = setStorage(s, "v1alpha1"); stepErr != nil {
			return
		}
		cli("dry run", "storage", "migrate", "-f", website, "--kubeconfig", s.kubeconfig, "--dry-run")
		cli("migrate", "storage", "migrate", "-f", website, "--kubeconfig", s.kubeconfig)
		cli("again", "storage", "migrate", "-f", website, "--kubeconfig", s.kubeconfig)
		cli("unknown crd", "storage", "migrate", "-f", website, "--kubeconfig", s.kubeconfig, "--crd-name", "nope")
		if resp, err := http.Get("http://" + s.httpAddr + "/katalog/website-v1"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			katalogAnswer = string(b)
		}
	})
	if stepErr != nil {
		t.Fatal(stepErr)
	}
	for name, c := range codes {
		if want := map[bool]int{true: 1, false: 0}[name == "unknown crd"]; c != want {
			t.Errorf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", name, c, want, res[name].out, res[name].err)
		}
	}

	// versions -o json: per version, with every reason.
	var report versions.Report
	if err := json.Unmarshal([]byte(res["versions json"].out), &report); err != nil {
		t.Fatalf("versions -o json: %v\n%s", err, res["versions json"].out)
	}
	if !report.Conversions.Known || len(report.CRDs) != 1 {
		t.Fatalf("report: %+v", report)
	}
	cr := report.CRDs[0]
	if cr.Name != "websites.demo.orkestra.io" || cr.StorageVersion != "v1" || !slices.Equal(cr.StoredVersions, []string{"v1"}) || *cr.Objects != 2 || cr.Conversion != "Webhook" {
		t.Errorf("CRD: %+v", cr)
	}
	alpha, v1 := cr.Versions[0], cr.Versions[1]
	if v1.Name != "v1" || v1.Verdict != versions.NotYet || !slices.Equal(v1.Because, []string{"it is the storage version; make another version storage first (a migration then moves the objects)"}) || *v1.Objects != 2 {
		t.Errorf("v1: %+v", v1)
	}
	wantAlpha := []string{
		"it is not deprecated: set deprecated: true (and a deprecationWarning) on its katalog entry so that clients are warned before it goes",
		"katalog entry website-v1alpha1 watches v1alpha1, so the operator's own reads convert to it; set enabled: false on that entry",
		"clients still use it: ",
		"the operator has counted conversions for only ",
	}
	if alpha.Name != "v1alpha1" || alpha.Verdict != versions.NotYet || len(alpha.Because) != len(wantAlpha) || *alpha.Objects != 0 || alpha.ConversionsTo == nil || *alpha.ConversionsTo < 1 {
		t.Fatalf("v1alpha1: %+v", alpha)
	}
	for i, w := range wantAlpha {
		if !strings.HasPrefix(alpha.Because[i], w) {
			t.Errorf("v1alpha1 reason %d = %q, want %q…", i, alpha.Because[i], w)
		}
	}
	text := res["versions text"].out
	for _, want := range []string{
		"websites.demo.orkestra.io (Website): storage v1, storedVersions [v1], 2 objects, conversion Webhook\n",
		"  VERSION   SERVED  STORAGE  STORED  DEPRECATED  OBJECTS  CONVERSIONS TO  FROM  VERDICT\n",
		"  v1: not yet, because it is the storage version; make another version storage first (a migration then moves the objects)\n",
		"\nconversion counters: " + "http://",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("versions text lacks %q:\n%s", want, text)
		}
	}
	if want := "\nconversion counters: unknown (no running operator pod (app.kubernetes.io/instance=orkestra,app.kubernetes.io/name=orkestra) in namespace orkestra-system; pass --operator-namespace/--operator-name, or --metrics-url)\n"; !strings.HasSuffix(res["versions no operator"].out, want) {
		t.Errorf("versions without the operator:\n%s\nwant it to end with %q", res["versions no operator"].out, want)
	}

	// storage migrate.
	if want := "would rewrite websites.demo.orkestra.io default/hello\nwould rewrite websites.demo.orkestra.io default/shop\nwebsites.demo.orkestra.io: would rewrite 2 objects at v1alpha1, then set storedVersions [v1 v1alpha1] → [v1alpha1]\n"; res["dry run"].out != want {
		t.Errorf("dry run stdout %q, want %q", res["dry run"].out, want)
	}
	out := res["migrate"].out
	if !strings.HasPrefix(out, "websites.demo.orkestra.io: 2 objects rewritten at v1alpha1 (0 changed or deleted meanwhile) by Orkestra in ") ||
		!strings.HasSuffix(out, "; storedVersions [v1 v1alpha1] → [v1alpha1]\n") {
		t.Errorf("migrate stdout %q", out)
	}
	if e := res["migrate"].err; strings.Contains(e, "\r") || !strings.HasSuffix(e, "websites.demo.orkestra.io: 2 rewritten, 0 changed or deleted meanwhile, 0 to go\n") {
		t.Errorf("migrate progress on a non-terminal: %q, want plain lines ending with the final count", e)
	}
	if want := "websites.demo.orkestra.io: nothing to migrate: storedVersions [v1alpha1] holds only the storage version\n"; res["again"].out != want {
		t.Errorf("second migrate stdout %q, want %q", res["again"].out, want)
	}
	if want := "error: --crd-name nope: the katalog has no CRD of that name; it has websites.demo.orkestra.io\n"; res["unknown crd"].err != want {
		t.Errorf("--crd-name nope: stderr %q, want %q", res["unknown crd"].err, want)
	}
	// With --storage-migration=false /katalog has no storage object.
	if katalogAnswer == "" || strings.Contains(katalogAnswer, `"storage"`) {
		t.Errorf("/katalog/website-v1 with the migration off: %s", katalogAnswer)
	}
}

func TestProgressBar(t *testing.T) {
	p := storage.Progress{Method: storage.MethodOrkestra, Migrated: 4, Skipped: 1, Remaining: 5}
	if got, want := bar(p, 30), "[===============>              ] 4 rewritten, 1 changed or deleted meanwhile, 5 to go"; got != want {
		t.Errorf("bar = %q, want %q", got, want)
	}
	p.Remaining = -1
	if got, want := bar(p, 30), "4 rewritten, 1 changed or deleted meanwhile"; got != want {
		t.Errorf("bar without a total = %q, want %q", got, want)
	}
	if got, want := bar(storage.Progress{Method: storage.MethodBuiltin, Remaining: -1}, 30), "the built-in StorageVersionMigration is running"; got != want {
		t.Errorf("bar under the built-in migrator = %q, want %q", got, want)
	}

	// On a terminal the bar is redrawn in place, at most every 100ms but
	// always at the end.
	var w bytes.Buffer
	now := time.Unix(0, 0)
	b := &progressBar{w: &w, name: "x", terminal: true, now: func() time.Time { return now }}
	b.update(storage.Progress{Migrated: 0, Remaining: 2})
	b.update(storage.Progress{Migrated: 1, Remaining: 1}) // same instant: skipped
	b.update(storage.Progress{Migrated: 2, Remaining: 0}) // the end: drawn
	b.done()
	want := "\rx [>                             ] 0 rewritten, 0 changed or deleted meanwhile, 2 to go" +
		"\rx [==============================] 2 rewritten, 0 changed or deleted meanwhile, 0 to go\n"
	if w.String() != want {
		t.Errorf("terminal output %q, want %q", w.String(), want)
	}
	// Elsewhere: a line at most once a second, and the last one.
	w.Reset()
	b = &progressBar{w: &w, name: "x", now: func() time.Time { return now }}
	b.update(storage.Progress{Migrated: 0, Remaining: 2})
	now = now.Add(500 * time.Millisecond)
	b.update(storage.Progress{Migrated: 1, Remaining: 1})
	b.update(storage.Progress{Migrated: 2, Remaining: 0})
	b.done()
	if want := "x: 0 rewritten, 0 changed or deleted meanwhile, 2 to go\nx: 2 rewritten, 0 changed or deleted meanwhile, 0 to go\n"; w.String() != want {
		t.Errorf("plain output %q, want %q", w.String(), want)
	}
}

func TestCheckAgainst(t *testing.T) {
	td := "../../lifecycle/compat/testdata/"
	out, errOut, code := run(t, "", "check", "-f", td+"deprecated", "--against", td+"base")
	if code != 0 || errOut != "" || out != "ok: "+td+"deprecated — 2 entries, 4 expressions, 2 conversion paths; against "+td+"base: no breaking change, 0 warnings\n" {
		t.Errorf("compatible: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = run(t, "", "check", "-f", td+"deprecated-unserved", "--against", td+"deprecated")
	if code != 0 || !strings.HasPrefix(errOut, td+"deprecated-unserved/crd.yaml:11:7: warning: [gadget-v1] spec.versions[v1alpha1].served: version v1alpha1 stops being served") ||
		!strings.HasSuffix(out, "against "+td+"deprecated: no breaking change, 1 warning\n") {
		t.Errorf("a warning: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = run(t, "", "check", "-f", td+"removed", "--against", td+"base")
	if code != 1 || out != "" || !strings.HasPrefix(errOut, td+"removed/crd.yaml:9:3: [gadget-v1] spec.versions[v1alpha1]: version v1alpha1 is removed while it is served") ||
		!strings.HasSuffix(errOut, "\nagainst "+td+"base: 1 breaking change, 0 warnings\n") {
		t.Errorf("a breaking change: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "k.yaml"), []byte("apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nspec: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = run(t, "", "check", "-f", td+"base", "--against", broken)
	if want := "error: --against " + broken + ": the old revision does not compile; run orkestra check -f " + broken + " to see why\n"; code != 1 || errOut != want {
		t.Errorf("an old revision that does not compile: exit %d, stderr %q, want %q", code, errOut, want)
	}
}

// TestManifestsIdentityConversion: a CRD whose conversion only copies is
// installed with strategy None, and the command says so.
func TestManifestsIdentityConversion(t *testing.T) {
	dir := t.TempDir()
	crd, err := os.ReadFile("../../engine/testdata/identity/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), crd, 0o644); err != nil {
		t.Fatal(err)
	}
	k := filepath.Join(dir, "k.yaml")
	if err := os.WriteFile(k, []byte(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: twins}
spec:
  crds:
    twin:
      crdFile: ./crd.yaml
      apiTypes: {group: test.orkestra.io, version: v1, kind: Twin}
      conversion:
        storageVersion: v1
        paths:
          - {from: v1, to: v2}
          - {from: v2, to: v1}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "", "manifests", "-f", k)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := "note: CRD twins.test.orkestra.io: every version has the same schema and every conversion path only copies fields, so it is installed with conversion.strategy: None (the API server rewrites apiVersion itself and never calls the webhook)\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	for _, doc := range strings.Split(out, "\n---\n") {
		if !strings.Contains(doc, "kind: CustomResourceDefinition") {
			continue
		}
		var c apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal([]byte(doc), &c); err != nil {
			t.Fatal(err)
		}
		if c.Spec.Conversion == nil || c.Spec.Conversion.Strategy != apiextensionsv1.NoneConverter || c.Spec.Conversion.Webhook != nil {
			t.Errorf("conversion %+v, want strategy None", c.Spec.Conversion)
		}
		return
	}
	t.Fatalf("no CRD in the output:\n%s", out)
}
