package conformance

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/orkspace/orkestra-cel/webhook"
)

// Labels the apiserver checks put on the objects they write.
const (
	LabelRun     = "conformance.orkestra.io/run"
	LabelRound   = "conformance.orkestra.io/round"
	LabelWritten = "conformance.orkestra.io/written-through"
	LabelGroup   = "conformance.orkestra.io/group"
)

// reviewOrders are the conversionReviewVersions each round installs.
var reviewOrders = [][]string{{"v1", "v1beta1"}, {"v1beta1", "v1"}}

// reviewRecord is one ConversionReview the webhook received.
type reviewRecord struct {
	apiVersion string
	desired    string
	objects    int
	failure    string // the Failure message, when it answered one
}

// recorder wraps the /convert handler and records every review.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	all  []reviewRecord
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, webhook.DefaultMaxRequestBytes+1))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req struct {
		APIVersion string `json:"apiVersion"`
		Request    struct {
			DesiredAPIVersion string            `json:"desiredAPIVersion"`
			Objects           []json.RawMessage `json:"objects"`
		} `json:"request"`
	}
	_ = json.Unmarshal(body, &req)
	tee := &teeWriter{ResponseWriter: w}
	rec.next.ServeHTTP(tee, r)
	var resp struct {
		Response struct {
			Result struct {
				Status  string `json:"status"`
				Message string `json:"message"`
			} `json:"result"`
		} `json:"response"`
	}
	_ = json.Unmarshal(tee.buf.Bytes(), &resp)
	record := reviewRecord{apiVersion: req.APIVersion, desired: req.Request.DesiredAPIVersion, objects: len(req.Request.Objects)}
	if resp.Response.Result.Status != "Success" {
		record.failure = resp.Response.Result.Message
		if record.failure == "" {
			record.failure = strings.TrimSpace(tee.buf.String())
		}
	}
	rec.mu.Lock()
	rec.all = append(rec.all, record)
	rec.mu.Unlock()
}

// mark returns a position; since returns the reviews received after it.
func (rec *recorder) mark() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.all)
}

func (rec *recorder) since(mark int) []reviewRecord {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]reviewRecord(nil), rec.all[mark:]...)
}

type teeWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (t *teeWriter) Write(b []byte) (int, error) {
	t.buf.Write(b)
	return t.ResponseWriter.Write(b)
}

// webhookServer serves the real /convert handler over TLS on 127.0.0.1.
type webhookServer struct {
	url     string
	caPEM   []byte
	rec     *recorder
	metrics *webhook.Metrics
	srv     *http.Server
	done    chan struct{}
}

func (r *runner) startWebhook() (*webhookServer, error) {
	cert, err := newServingCert()
	if err != nil {
		return nil, fmt.Errorf("generating the run's CA and serving certificate: %w", err)
	}
	metrics, err := webhook.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		return nil, err
	}
	var conv webhook.Converter = r.conv
	if r.opts.webhookConverter != nil {
		conv = r.opts.webhookConverter
	}
	h := webhook.NewConvertHandler(conv, webhook.ConvertOptions{Served: r.plan.Served(), Metrics: metrics})
	rec := &recorder{next: h}
	mux := http.NewServeMux()
	mux.Handle(webhook.ConvertPath, rec)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening on 127.0.0.1: %w", err)
	}
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert.cert}},
		// TLS handshake errors when the API server goes away are noise.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	ws := &webhookServer{
		url:     "https://" + ln.Addr().String() + webhook.ConvertPath,
		caPEM:   cert.caPEM,
		rec:     rec,
		metrics: metrics,
		srv:     srv,
		done:    make(chan struct{}),
	}
	go func() {
		defer close(ws.done)
		_ = srv.ServeTLS(ln, "", "")
	}()
	return ws, nil
}

func (ws *webhookServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = ws.srv.Shutdown(ctx)
	<-ws.done
}

// apiRun is one run's state against the API server.
type apiRun struct {
	*runner
	env   *Environment
	wh    *webhookServer
	runID string
	ns    string
	// installed CRDs, to remove at the end.
	installed []*crdInfo
	// probes counts probe objects, for unique names.
	probes int
}

// apiServerChecks runs the apiserver group.
func (r *runner) apiServerChecks(ctx context.Context) {
	a := &apiRun{runner: r, runID: utilrand.String(6)}
	env := r.opts.Environment
	if env == nil {
		c := r.begin(GroupAPIServer, "start kube-apiserver and etcd")
		var err error
		env, err = StartEnvironment(ctx, r.opts.AssetsDir, r.katalogDirs()...)
		if err != nil {
			c.failf("%v", err)
			r.end(c)
			return
		}
		c.pass()
		c.Note = "from " + env.Assets
		r.end(c)
		defer func() { _ = env.Stop() }()
	}
	a.env = env

	c := r.begin(GroupAPIServer, "serve /convert over TLS")
	wh, err := r.startWebhook()
	if err != nil {
		c.failf("%v", err)
		r.end(c)
		return
	}
	defer wh.stop()
	a.wh = wh
	c.pass()
	c.Note = wh.url + " with a CA made for this run"
	r.end(c)

	if err := a.setupNamespace(ctx); err != nil {
		c := r.begin(GroupAPIServer, "namespace")
		c.failf("%v", err)
		r.end(c)
		return
	}
	defer a.cleanup()

	for _, ci := range r.crds {
		c := r.begin(GroupAPIServer, "install "+ci.name)
		if err := a.install(ctx, ci, reviewOrders[0]); err != nil {
			c.failf("%v", err)
			r.end(c)
			continue
		}
		a.installed = append(a.installed, ci)
		c.pass()
		c.Note = fmt.Sprintf("conversion webhook, served %s, storage %s", strings.Join(ci.versions, ", "), ci.storage)
		r.end(c)
	}
	if len(a.installed) == 0 {
		return
	}
	for _, ci := range a.installed {
		a.deprecationChecks(ctx, ci)
	}
	for round, order := range reviewOrders {
		if ctx.Err() != nil {
			return
		}
		tag := "[" + strings.Join(order, ",") + "]"
		if round > 0 {
			c := r.begin(GroupAPIServer, "switch conversionReviewVersions to "+tag)
			for _, ci := range a.installed {
				if err := a.setReviewVersions(ctx, ci, order); err != nil {
					c.failf("%s: %v", ci.name, err)
				} else {
					c.pass()
				}
			}
			r.end(c)
		}
		mark := wh.rec.mark()
		for _, ci := range a.installed {
			a.round(ctx, ci, round, tag)
		}
		a.goldenRound(ctx, round, tag)
		a.reviewVersionsCheck(order, tag, wh.rec.since(mark))
	}
}

// katalogDirs are where the assets script is searched for besides the
// working directory.
func (r *runner) katalogDirs() []string {
	if r.plan.Katalog == nil || r.plan.Katalog.File == "" {
		return nil
	}
	return []string{filepath.Dir(r.plan.Katalog.File)}
}

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

func (a *apiRun) setupNamespace(ctx context.Context) error {
	a.ns = "orkestra-conformance-" + a.runID
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": a.ns, "labels": map[string]any{LabelRun: a.runID}},
	}}
	_, err := a.env.dyn.Resource(namespacesGVR).Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating namespace %s: %w", a.ns, err)
	}
	return nil
}

// cleanup deletes the CRDs (and with them their objects) and the namespace,
// and waits for the CRDs to go so that a later run can install them again.
func (a *apiRun) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, ci := range a.installed {
		_ = a.env.ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, ci.name, metav1.DeleteOptions{})
	}
	_ = a.env.dyn.Resource(namespacesGVR).Delete(ctx, a.ns, metav1.DeleteOptions{})
	for _, ci := range a.installed {
		_ = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			_, err := a.env.ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, ci.name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	}
}

// install creates the CRD with webhook conversion to this run's server and
// waits until every served version answers.
func (a *apiRun) install(ctx context.Context, ci *crdInfo, order []string) error {
	crds := a.env.ext.ApiextensionsV1().CustomResourceDefinitions()
	crd := ci.crd.Object.DeepCopy()
	crd.ObjectMeta = metav1.ObjectMeta{Name: crd.Name, Labels: crd.Labels, Annotations: crd.Annotations}
	crd.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
	crd.Spec.PreserveUnknownFields = false
	if a.plan.Katalog != nil {
		a.plan.Katalog.ApplyDeprecations(ci.crd, &crd.Spec)
	}
	url := a.wh.url
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: a.wh.caPEM},
			ConversionReviewVersions: order,
		},
	}
	if _, err := crds.Get(ctx, crd.Name, metav1.GetOptions{}); err == nil {
		return fmt.Errorf("CRD %s already exists in this API server; another run is using it", crd.Name)
	}
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating CRD %s: %w", crd.Name, err)
	}
	// Established, then every served version lists, then a first create
	// goes through (the API server serves a new CRD a moment after it is
	// Established).
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.NamesAccepted && c.Status == apiextensionsv1.ConditionFalse {
				return false, fmt.Errorf("names not accepted: %s", c.Message)
			}
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for CRD %s to be Established: %w", crd.Name, err)
	}
	for _, v := range ci.versions {
		var last error
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, last = a.res(ci, v).List(ctx, metav1.ListOptions{Limit: 1})
			return last == nil, nil
		})
		if err != nil {
			return fmt.Errorf("version %s of %s is not served 30s after the CRD was Established: %w", v, crd.Name, last)
		}
	}
	name, err := a.probe(ctx, ci, ci.storage, "install")
	if err != nil {
		return err
	}
	return a.res(ci, ci.storage).Delete(ctx, name, metav1.DeleteOptions{})
}

// res is the client of ci's objects at version v in the run's namespace.
func (a *apiRun) res(ci *crdInfo, v string) dynamic.ResourceInterface {
	r := a.env.dyn.Resource(ci.gvr(v))
	if ci.namespaced {
		return r.Namespace(a.ns)
	}
	return r
}

// probe creates a small object at version v (retrying while the API server
// does not serve the resource yet) and returns its name.
func (a *apiRun) probe(ctx context.Context, ci *crdInfo, v, why string) (string, error) {
	a.probes++
	base := append(append([]map[string]any(nil), ci.samples[v]...), ci.pool[v]...)
	var obj map[string]any
	if len(base) > 0 {
		obj = deepCopyMap(base[0])
	} else {
		obj = map[string]any{"apiVersion": ci.gv(v), "kind": ci.gk.Kind, "metadata": map[string]any{}}
	}
	name := fmt.Sprintf("probe-%s-%d", a.runID, a.probes)
	a.prepare(obj, name, map[string]string{LabelGroup: "probe-" + why})
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, last = a.res(ci, v).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		if last == nil {
			return true, nil
		}
		if apierrors.IsNotFound(last) || apierrors.IsMethodNotSupported(last) || apierrors.IsServiceUnavailable(last) {
			return false, nil
		}
		return false, last
	})
	if err != nil {
		if last == nil {
			last = err
		}
		return "", fmt.Errorf("creating a probe %s at %s: %w", ci.gk.Kind, v, last)
	}
	return name, nil
}

// prepare readies an object for the API server: name, namespace, the run's
// labels, no server-set metadata.
func (a *apiRun) prepare(obj map[string]any, name string, labels map[string]string) {
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	for _, k := range append([]string{"namespace", "generateName", "ownerReferences", "finalizers", "deletionTimestamp", "deletionGracePeriodSeconds"}, serverMetadata...) {
		delete(meta, k)
	}
	meta["name"] = name
	if a.ns != "" {
		if crdNamespaced(obj, a.runner) {
			meta["namespace"] = a.ns
		}
	}
	l, _ := meta["labels"].(map[string]any)
	if l == nil {
		l = map[string]any{}
		meta["labels"] = l
	}
	l[LabelRun] = a.runID
	for k, v := range labels {
		l[k] = v
	}
}

func crdNamespaced(obj map[string]any, r *runner) bool {
	u := &unstructured.Unstructured{Object: obj}
	if ci := r.crdFor(u.GroupVersionKind().GroupKind()); ci != nil {
		return ci.namespaced
	}
	return true
}

// updateCRD applies f to the CRD and updates it, retrying on conflicts.
func (a *apiRun) updateCRD(ctx context.Context, ci *crdInfo, f func(*apiextensionsv1.CustomResourceDefinition)) error {
	crds := a.env.ext.ApiextensionsV1().CustomResourceDefinitions()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd, err := crds.Get(ctx, ci.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		f(crd)
		_, err = crds.Update(ctx, crd, metav1.UpdateOptions{})
		return err
	})
}

// setReviewVersions installs conversionReviewVersions order and waits until
// the API server sends reviews of its first version.
func (a *apiRun) setReviewVersions(ctx context.Context, ci *crdInfo, order []string) error {
	err := a.updateCRD(ctx, ci, func(crd *apiextensionsv1.CustomResourceDefinition) {
		crd.Spec.Conversion.Webhook.ConversionReviewVersions = order
	})
	if err != nil {
		return fmt.Errorf("updating conversionReviewVersions: %w", err)
	}
	other := ""
	for _, v := range ci.versions {
		if v != ci.storage {
			other = v
			break
		}
	}
	if other == "" {
		return nil // nothing ever converts
	}
	name, err := a.probe(ctx, ci, ci.storage, "review")
	if err != nil {
		return err
	}
	defer func() { _ = a.res(ci, ci.storage).Delete(ctx, name, metav1.DeleteOptions{}) }()
	want := "apiextensions.k8s.io/" + order[0]
	// The API server keeps the storage of the CRD's previous revision (and
	// its watch cache, which converts with the previous settings) for at
	// least a second after an update; wait until only the new settings
	// are in use: a GET at another version converts with a review of the
	// new version and nothing else arrives.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(1500 * time.Millisecond):
	}
	var seen []string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		mark := a.wh.rec.mark()
		if _, err := a.res(ci, other).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return false, nil
		}
		got := a.wh.rec.since(mark)
		seen = seen[:0]
		for _, rv := range got {
			seen = append(seen, shortReview(rv.apiVersion))
		}
		for _, rv := range got {
			if rv.apiVersion != want {
				return false, nil
			}
		}
		return len(got) > 0, nil
	})
	if err != nil {
		return fmt.Errorf("the API server still sends %v reviews a minute after conversionReviewVersions became %v", seen, order)
	}
	return nil
}

// setStorage makes v the storage version and waits until the API server
// stores at it: a create at v then needs no conversion.
func (a *apiRun) setStorage(ctx context.Context, ci *crdInfo, v string) error {
	err := a.updateCRD(ctx, ci, func(crd *apiextensionsv1.CustomResourceDefinition) {
		for i := range crd.Spec.Versions {
			crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == v
		}
	})
	if err != nil {
		return fmt.Errorf("making %s the storage version: %w", v, err)
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		mark := a.wh.rec.mark()
		if _, err := a.probe(ctx, ci, v, "storage"); err != nil {
			return false, err
		}
		return len(a.wh.rec.since(mark)) == 0, nil
	})
}

// reviewVersionsCheck asserts the reviews of a round were of the version
// conversionReviewVersions puts first, and that none failed.
func (a *apiRun) reviewVersionsCheck(order []string, tag string, reviews []reviewRecord) {
	c := a.begin(GroupAPIServer, "webhook reviews "+tag)
	defer a.end(c)
	count := map[string]int{}
	objects := 0
	for _, rv := range reviews {
		count[shortReview(rv.apiVersion)]++
		objects += rv.objects
		if rv.failure != "" {
			c.failf("the webhook answered a %s review (to %s) with Failure: %s", shortReview(rv.apiVersion), rv.desired, rv.failure)
		}
	}
	converts := false
	for _, ci := range a.installed {
		converts = converts || len(ci.versions) > 1
	}
	switch {
	case !converts:
		if len(reviews) > 0 {
			c.failf("the API server sent %d reviews although every CRD serves one version", len(reviews))
		} else {
			c.pass()
		}
		c.Note = "one served version per CRD: the webhook is never called, as expected"
		return
	case count[order[0]] == 0:
		c.failf("the webhook received no %s review (received: %v)", order[0], count)
	case count[order[1]] > 0:
		c.failf("the webhook received %d %s reviews although conversionReviewVersions puts %s first", count[order[1]], order[1], order[0])
	default:
		c.pass()
	}
	c.Note = fmt.Sprintf("%d %s reviews, %d %s, %d objects", count[order[0]], order[0], count[order[1]], order[1], objects)
}
