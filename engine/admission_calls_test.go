package engine

import (
	"strings"
	"testing"
)

// An admission rule is refused for calling a function the API server's CEL
// lacks, not for reading a field of that name (the library declares
// spec(o) and status(o), upstream's readers of an object's maps).
func TestCalls(t *testing.T) {
	for src, want := range map[string]bool{
		"weekday()":                              true,
		"object.spec.x > 0 && weekday ()":        true,
		"spec(object).x == 1":                    true,
		"object.spec.replicas > 0":               false,
		"has(object.spec) && object.status == 1": false,
		"legacy.str(object, 'spec.x') == 'a'":    false,
		"myspec(object)":                         false,
	} {
		fn := "spec"
		if strings.Contains(src, "weekday") {
			fn = "weekday"
		}
		if got := calls(src, fn); got != want {
			t.Errorf("calls(%q, %q) = %v, want %v", src, fn, got, want)
		}
	}
}
