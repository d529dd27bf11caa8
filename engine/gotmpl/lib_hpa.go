package gotmpl

import "github.com/orkspace/orkestra-cel/engine/notes"

// The HorizontalPodAutoscaler functions of the original engine (upstream
// pkg/note/kube_hpa.go), over an HPA child as the API server gives it.

// needsEnrich is the reason of the functions that read what the original's
// entry-level enrich: adds to a child, which this runtime does not collect.
func needsEnrich(what, kinds string) string {
	return "it reads " + what + ", which the original's enrich: [" + kinds + "] adds to a child by extra API reads; this runtime does not collect it (enrich: [" + kinds + "] is refused at load; it collects pods only); read the children the katalog declares with .children instead"
}

var hpaFamily = family{name: "hpa (an HPA child)", functions: []*function{
	objectFunction("hpaCurrentReplicas", notes.HPACurrentReplicas, "`hpaCurrentReplicas`"),
	objectFunction("hpaDesiredReplicas", notes.HPADesiredReplicas, "`hpaDesiredReplicas`"),
	objectFunction("hpaMaxReplicas", notes.HPAMaxReplicas, "`hpaMaxReplicas`"),
	objectFunction("hpaMinReplicas", notes.HPAMinReplicas, "`hpaMinReplicas` (1 when absent)"),
	objectFunction("hpaAtMax", notes.HPAAtMax, "`hpaAtMax` (current ≥ max)"),
	objectFunction("hpaAbleToScale", notes.HPAAbleToScale, "`hpaAbleToScale`"),
	objectFunction("hpaScalingActive", notes.HPAScalingActive, "`hpaScalingActive`"),
	objectFunction("hpaScalingLimited", notes.HPAScalingLimited, "`hpaScalingLimited` (that condition is `True`)"),
	objectFunction("hpaScaling", notes.HPAScaling, "`hpaScaling` (ScalingActive and current ≠ desired)"),
	{name: "hpaMetricTypes", refused: needsEnrich("the metric summary (_currentMetrics)", "hpa")},
	{name: "hpaScaleTargetKind", refused: needsEnrich("the scale target (_scaleTarget)", "hpa")},
	{name: "hpaScaleTargetName", refused: needsEnrich("the scale target (_scaleTarget)", "hpa")},
}}
