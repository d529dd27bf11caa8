package gotmpl

import "github.com/orkspace/orkestra-cel/engine/notes"

// The quantity functions (upstream pkg/note/kube_quantity.go): Kubernetes
// resource quantities; a string that is not one is an error.

var quantityFamily = family{name: "quantity", functions: []*function{
	noteFunction("parseQuantity", notes.ParseQuantity, argString, 0, "`parseQuantity` (`100m` → 0.1, `1Gi` → 1073741824)"),
	spaceless(noteFunction("formatQuantity", notes.FormatQuantity, []vkind{vDouble}, 0, "`formatQuantity` (0.1 → `100m`, 2 → `2`, a whole multiple of 1024 → binary: 1073741824 → `1Gi`)")),
	spaceless(noteFunction("sumQuantity", notes.SumQuantity, argStrings2, 1, "`sumQuantity A B` (`1Gi` + `512Mi` → `1536Mi`)")),
	spaceless(valueFirst(noteFunction("subtractQuantity", notes.SubtractQuantity, argStrings2, 1, "`subtractQuantity A B` (`100m` − `200m` → `-100m`)"))),
}}
