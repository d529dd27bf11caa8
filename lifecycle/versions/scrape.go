package versions

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/orkspace/orkestra-cel/webhook"
)

// Operator names the pods of an in-cluster install (orkestra manifests):
// labelled app.kubernetes.io/name=orkestra and app.kubernetes.io/instance=
// Name in Namespace, serving /metrics on Port.
type Operator struct {
	Namespace, Name string
	Port            int
}

// ScrapeURLs reads the counters from the /metrics endpoints given.
func ScrapeURLs(ctx context.Context, urls []string) Counters {
	var pages []page
	for _, u := range urls {
		body, err := httpGet(ctx, u)
		if err != nil {
			return unknown(fmt.Sprintf("reading %s: %v", u, err))
		}
		pages = append(pages, page{from: u, body: body})
	}
	return parse(pages)
}

// ScrapeOperator reads the counters of every running operator pod through
// the API server's pod proxy.
func ScrapeOperator(ctx context.Context, cfg *rest.Config, op Operator) Counters {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return unknown(err.Error())
	}
	sel := labels.SelectorFromSet(labels.Set{"app.kubernetes.io/name": "orkestra", "app.kubernetes.io/instance": op.Name}).String()
	pods, err := kube.CoreV1().Pods(op.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return unknown(fmt.Sprintf("listing the operator's pods (%s in namespace %s): %v; pass --metrics-url", sel, op.Namespace, err))
	}
	var pages []page
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		body, err := kube.CoreV1().Pods(op.Namespace).ProxyGet("http", p.Name, fmt.Sprint(op.Port), "metrics", nil).DoRaw(ctx)
		if err != nil {
			return unknown(fmt.Sprintf("reading /metrics of pod %s/%s through the API server: %v; pass --metrics-url", op.Namespace, p.Name, err))
		}
		pages = append(pages, page{from: "pod " + op.Namespace + "/" + p.Name, body: body})
	}
	if len(pages) == 0 {
		return unknown(fmt.Sprintf("no running operator pod (%s) in namespace %s; pass --operator-namespace/--operator-name, or --metrics-url", sel, op.Namespace))
	}
	return parse(pages)
}

type page struct {
	from string
	body []byte
}

func unknown(why string) Counters { return Counters{Source: Source{Error: why}} }

func httpGet(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s", resp.Status)
	}
	return body, nil
}

// parse sums the conversion counters of every page, keeps the latest
// conversion per pair, and the latest process start (the youngest replica).
func parse(pages []page) Counters {
	c := Counters{Source: Source{Known: true}, ByPair: map[string]map[[2]string]float64{}, Last: map[string]map[[2]string]time.Time{}}
	var youngest time.Time
	missingStart := false
	for _, p := range pages {
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(strings.NewReader(string(p.body)))
		if err != nil {
			return unknown(fmt.Sprintf("%s does not serve Prometheus text metrics: %v", p.from, err))
		}
		c.Source.From = append(c.Source.From, p.from)
		for _, m := range family(fams, webhook.MetricRequests) {
			kind, pair := pairOf(m)
			if c.ByPair[kind] == nil {
				c.ByPair[kind] = map[[2]string]float64{}
			}
			c.ByPair[kind][pair] += m.GetCounter().GetValue()
		}
		for _, m := range family(fams, webhook.MetricLastSeen) {
			kind, pair := pairOf(m)
			t := unixTime(m.GetGauge().GetValue())
			if c.Last[kind] == nil {
				c.Last[kind] = map[[2]string]time.Time{}
			}
			if t.After(c.Last[kind][pair]) {
				c.Last[kind][pair] = t
			}
		}
		starts := family(fams, "process_start_time_seconds")
		if len(starts) == 0 {
			missingStart = true
			continue
		}
		if t := unixTime(starts[0].GetGauge().GetValue()); youngest.IsZero() || t.After(youngest) {
			youngest = t
		}
	}
	if !missingStart && !youngest.IsZero() {
		c.Source.Since = &youngest
	}
	return c
}

func family(fams map[string]*dto.MetricFamily, name string) []*dto.Metric {
	if f := fams[name]; f != nil {
		return f.GetMetric()
	}
	return nil
}

func pairOf(m *dto.Metric) (kind string, pair [2]string) {
	for _, l := range m.GetLabel() {
		switch l.GetName() {
		case "kind":
			kind = l.GetValue()
		case "from_version":
			pair[0] = l.GetValue()
		case "to_version":
			pair[1] = l.GetValue()
		}
	}
	return kind, pair
}

func unixTime(sec float64) time.Time {
	whole, frac := math.Modf(sec)
	return time.Unix(int64(whole), int64(frac*1e9))
}
