package gotmpl

// The HorizontalPodAutoscaler functions of the original engine (upstream
// pkg/note/docs: hpa), over an HPA child.

var hpaFamily = family{name: "hpa", functions: []*function{
	{name: "hpaMetricTypes", refused: "it lists the metric types of the summary (_currentMetrics) that the original's enrich: [hpa] adds to an HPA child, and this runtime does not implement enrich:"},
}}
