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

func fnCronFromMap(v any) (string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", fmt.Errorf("cronFromMap: expected map, got %T — use cronFromAny if the input may be a cron string", v)
	}
	return notes.CronFromMap(m), nil
}
