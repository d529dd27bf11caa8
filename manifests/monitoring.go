package manifests

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/operator"
	"github.com/orkspace/orkestra-cel/webhook"
)

// FileMonitoring holds the monitoring objects (--monitoring).
const FileMonitoring = "monitoring.yaml"

// LeaderMetric is controller-runtime's leader election gauge.
const LeaderMetric = "leader_election_master_status"

// ConversionSLO is the p99 latency of converting one object the alert
// holds the webhook to: the CRD conversion GA KEP's 50 ms.
const ConversionSLO = 0.05

// Alert is one alerting rule of the PrometheusRule.
type Alert struct {
	Name, Expr, For, Severity, Summary string
}

// Alerts are the alerts --monitoring installs, queried from the metric
// names the webhook and the operator export (one owner: their constants).
func Alerts(lease string) []Alert {
	return []Alert{
		{"OrkestraConversionFailures", fmt.Sprintf(`sum by (kind, from_version, to_version) (rate(%s{result="failure"}[5m])) > 0`, webhook.MetricRequests), "5m", "critical",
			"Conversions of {{ $labels.kind }} {{ $labels.from_version }}→{{ $labels.to_version }} fail: reads at other versions fail for clients"},
		{"OrkestraConversionSlow", fmt.Sprintf(`histogram_quantile(0.99, sum by (le, kind) (rate(%s_bucket[5m]))) > %g`, webhook.MetricDuration, ConversionSLO), "10m", "warning",
			"p99 conversion latency of {{ $labels.kind }} is over 50 ms"},
		{"OrkestraReconcileErrors", fmt.Sprintf(`sum by (crd) (rate(%s{result="error"}[5m])) > 0`, operator.MetricReconcileTotal), "15m", "warning",
			"Reconciles of {{ $labels.crd }} keep failing"},
		{"OrkestraQueueGrowing", fmt.Sprintf(`delta(%s[15m]) > 0 and %s > 100`, operator.MetricQueueDepth, operator.MetricQueueDepth), "15m", "warning",
			"The work queue of {{ $labels.crd }} keeps growing"},
		{"OrkestraLeaderMissing", fmt.Sprintf(`max(%s{name=%q}) < 1 or absent(%s{name=%q})`, LeaderMetric, lease, LeaderMetric, lease), "5m", "critical",
			"No Orkestra replica holds the lease " + lease + ": nothing reconciles"},
	}
}

// Panel is one panel of the Grafana dashboard: a title and its queries.
type Panel struct {
	Title   string
	Queries []string
	Unit    string
}

// Panels are the dashboard's panels.
func Panels() []Panel {
	d := webhook.MetricDuration + "_bucket"
	r := operator.MetricReconcileDuration + "_bucket"
	return []Panel{
		{"Conversions per second by kind and versions", []string{fmt.Sprintf(`sum by (kind, from_version, to_version) (rate(%s[5m]))`, webhook.MetricRequests)}, "ops"},
		{"Conversion latency (p50, p90, p99)", []string{
			fmt.Sprintf(`histogram_quantile(0.5, sum by (le, kind) (rate(%s[5m])))`, d),
			fmt.Sprintf(`histogram_quantile(0.9, sum by (le, kind) (rate(%s[5m])))`, d),
			fmt.Sprintf(`histogram_quantile(0.99, sum by (le, kind) (rate(%s[5m])))`, d)}, "s"},
		{"Conversion failures by kind and versions", []string{fmt.Sprintf(`sum by (kind, from_version, to_version) (rate(%s{result="failure"}[5m]))`, webhook.MetricRequests)}, "ops"},
		{"Reconciles per second by entry and result", []string{fmt.Sprintf(`sum by (crd, result) (rate(%s[5m]))`, operator.MetricReconcileTotal)}, "ops"},
		{"Reconcile duration p99 by entry", []string{fmt.Sprintf(`histogram_quantile(0.99, sum by (le, crd) (rate(%s[5m])))`, r)}, "s"},
		{"Queue depth by entry", []string{fmt.Sprintf(`sum by (crd) (%s)`, operator.MetricQueueDepth)}, "short"},
		{"Workers (active of pool) by entry", []string{fmt.Sprintf(`sum by (crd) (%s)`, operator.MetricWorkersActive), fmt.Sprintf(`sum by (crd) (%s)`, operator.MetricWorkers)}, "short"},
	}
}

// monitoringObjects are a ServiceMonitor for the operator's /metrics, the
// PrometheusRule of Alerts and the Grafana dashboard as a ConfigMap the
// usual dashboard sidecar picks up.
func (in *Install) monitoringObjects(labels map[string]string, lease string) []client.Object {
	ns := in.Options.Namespace
	sm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
		"metadata": map[string]any{"name": in.Options.Name, "namespace": ns, "labels": toAny(labels)},
		"spec": map[string]any{
			"selector":  map[string]any{"matchLabels": toAny(labels)},
			"endpoints": []any{map[string]any{"port": "http", "path": "/metrics", "interval": "30s"}},
		},
	}}
	var rules []any
	for _, a := range Alerts(lease) {
		rules = append(rules, map[string]any{"alert": a.Name, "expr": a.Expr, "for": a.For,
			"labels": map[string]any{"severity": a.Severity}, "annotations": map[string]any{"summary": a.Summary}})
	}
	pr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
		"metadata": map[string]any{"name": in.Options.Name, "namespace": ns, "labels": toAny(labels)},
		"spec":     map[string]any{"groups": []any{map[string]any{"name": "orkestra", "rules": rules}}},
	}}
	dash, _ := json.MarshalIndent(dashboard(), "", "  ")
	cm := &corev1.ConfigMap{
		TypeMeta:   typeMeta("v1", "ConfigMap"),
		ObjectMeta: metav1.ObjectMeta{Name: in.Options.Name + "-dashboard", Namespace: ns, Labels: merge(labels, map[string]string{"grafana_dashboard": "1"})},
		Data:       map[string]string{"orkestra.json": string(dash)},
	}
	return []client.Object{sm, pr, cm}
}

// dashboard is the Grafana dashboard model of Panels.
func dashboard() map[string]any {
	var panels []any
	for i, p := range Panels() {
		var targets []any
		for j, q := range p.Queries {
			targets = append(targets, map[string]any{"expr": q, "refId": string(rune('A' + j)), "datasource": map[string]any{"type": "prometheus", "uid": "${datasource}"}})
		}
		panels = append(panels, map[string]any{
			"id": i + 1, "type": "timeseries", "title": p.Title, "targets": targets,
			"gridPos":     map[string]any{"h": 8, "w": 12, "x": (i % 2) * 12, "y": (i / 2) * 8},
			"fieldConfig": map[string]any{"defaults": map[string]any{"unit": p.Unit}},
		})
	}
	return map[string]any{
		"title": "Orkestra", "uid": "orkestra", "schemaVersion": 39, "panels": panels,
		"templating": map[string]any{"list": []any{map[string]any{"name": "datasource", "type": "datasource", "query": "prometheus"}}},
	}
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
