package gotmpl

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/orkspace/orkestra-cel/engine/notes"
)

// cronMapSentinel prefixes the JSON that cronToMap renders, so that the
// adapter turns the value into a map (as the original conversion engine did).
const cronMapSentinel = "\x00CMAP\x00"

var cronKeys = []string{"minute", "hour", "dayOfMonth", "month", "dayOfWeek"}

// cronToMapValue splits a cron expression into its five named fields (all
// "*" when empty or not five fields); a map is returned as is.
func cronToMapValue(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	out := map[string]any{"minute": "*", "hour": "*", "dayOfMonth": "*", "month": "*", "dayOfWeek": "*"}
	expr := fnToString(v)
	if strings.TrimSpace(expr) == "" {
		return out
	}
	parts := strings.Fields(notes.ExpandCronMacro(expr))
	if len(parts) != 5 {
		return out
	}
	for i, k := range cronKeys {
		out[k] = parts[i]
	}
	return out
}

func fnCronToMap(v any) (string, error) {
	b, err := json.Marshal(cronToMapValue(v))
	if err != nil {
		return "", fmt.Errorf("cronToMap: %w", err)
	}
	return cronMapSentinel + string(b), nil
}

func cronFromMapValue(m map[string]any) string {
	parts := make([]string, len(cronKeys))
	for i, k := range cronKeys {
		parts[i] = "*"
		if v, ok := m[k]; ok {
			if s := fmt.Sprintf("%v", v); strings.TrimSpace(s) != "" {
				parts[i] = s
			}
		}
	}
	return strings.Join(parts, " ")
}

func fnCronFromMap(v any) (string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", fmt.Errorf("cronFromMap: expected map, got %T — use cronFromAny if the input may be a cron string", v)
	}
	return cronFromMapValue(m), nil
}

func fnCronFromAny(v any) string {
	switch x := v.(type) {
	case map[string]any:
		return cronFromMapValue(x)
	case string:
		return notes.CronNormalize(x)
	}
	return "* * * * *"
}

func starIfEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "*"
	}
	return s
}

func cronExpr(minute, hour, dom, month, dow string) string {
	return strings.Join([]string{starIfEmpty(minute), starIfEmpty(hour), starIfEmpty(dom), starIfEmpty(month), starIfEmpty(dow)}, " ")
}
