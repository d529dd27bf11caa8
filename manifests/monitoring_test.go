package manifests

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/orkestra-cel/operator"
	"github.com/orkspace/orkestra-cel/webhook"
)

var metricRe = regexp.MustCompile(`\b(orkestra_[a-z_]+|leader_election_[a-z_]+)`)

// Every metric an alert or a panel queries is one the webhook or the
// operator exports (their tests scrape those names from a running /metrics),
// or controller-runtime's leader gauge.
func TestMonitoringQueriesExportedMetrics(t *testing.T) {
	exported := map[string]bool{LeaderMetric: true}
	for _, m := range []string{webhook.MetricRequests, webhook.MetricDuration, webhook.MetricActive, webhook.MetricLastSeen,
		operator.MetricReconcileTotal, operator.MetricReconcileDuration, operator.MetricQueueDepth, operator.MetricWorkersActive, operator.MetricWorkers, operator.MetricResources} {
		exported[m] = true
	}
	var exprs []string
	for _, a := range Alerts("orkestra-shop") {
		exprs = append(exprs, a.Expr)
	}
	for _, p := range Panels() {
		exprs = append(exprs, p.Queries...)
	}
	for _, e := range exprs {
		names := metricRe.FindAllString(e, -1)
		if len(names) == 0 {
			t.Errorf("%q queries no metric", e)
		}
		for _, n := range names {
			if !exported[strings.TrimSuffix(n, "_bucket")] {
				t.Errorf("%q queries %s, which nothing exports", e, n)
			}
		}
		if strings.Count(e, "(") != strings.Count(e, ")") || strings.Count(e, "{") != strings.Count(e, "}") || strings.Count(e, "[") != strings.Count(e, "]") {
			t.Errorf("unbalanced %q", e)
		}
	}
}

func TestMonitoringObjects(t *testing.T) {
	plan := compile(t, "../examples/website/katalog.yaml")
	in, err := Generate(plan, Options{Monitoring: true})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range in.Objects {
		if o.File != FileMonitoring {
			continue
		}
		switch x := o.Object.(type) {
		case *unstructured.Unstructured:
			kinds = append(kinds, x.GetKind())
			if x.GetKind() == "PrometheusRule" {
				rules, _, _ := unstructured.NestedSlice(x.Object, "spec", "groups")
				if len(rules) != 1 {
					t.Fatalf("groups %v", rules)
				}
			}
		case *corev1.ConfigMap:
			kinds = append(kinds, "ConfigMap")
			var d struct{ Panels []any }
			if err := json.Unmarshal([]byte(x.Data["orkestra.json"]), &d); err != nil || len(d.Panels) != len(Panels()) || x.Labels["grafana_dashboard"] != "1" {
				t.Fatalf("dashboard: %v %d", err, len(d.Panels))
			}
		}
	}
	if strings.Join(kinds, ",") != "ServiceMonitor,PrometheusRule,ConfigMap" {
		t.Fatalf("monitoring objects %v", kinds)
	}
}
