package webhook

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateMetaMap validates the labels or annotations a conversion set, with
// the API server's rules (it would reject the converted object otherwise):
// keys are qualified names (case-insensitive for annotations), label values
// valid label values, annotations 256 KiB at most in total. Only the entries
// in changed are checked; valid keys are remembered, since a converter sets
// the same few keys on every object. Annotation a, kept apart by the
// converter (apart.go), stands in for m's entry with its key in the total;
// its key was checked once (NewConvertHandler).
func validateMetaMap(name string, m map[string]any, changed []string, a apart) error {
	// The path is made only for an error: most converted objects have none.
	path := func() *field.Path { return field.NewPath("metadata", name) }
	var errs field.ErrorList
	for _, k := range changed {
		key := k
		if name == "annotations" {
			key = strings.ToLower(k)
		}
		if !knownValidKey(key) {
			msgs := validation.IsQualifiedName(key)
			for _, msg := range msgs {
				errs = append(errs, field.Invalid(path(), k, msg))
			}
			if len(msgs) == 0 {
				rememberValidKey(key)
			}
		}
		if name == "labels" {
			v := m[k].(string)
			for _, msg := range validation.IsValidLabelValue(v) {
				errs = append(errs, field.Invalid(path(), v, msg))
			}
		}
	}
	if name == "annotations" {
		size := 0
		for k, v := range m {
			if a.key == "" || k != a.key {
				size += len(k) + len(v.(string))
			}
		}
		if a.key != "" {
			size += len(a.key) + len(a.value)
		}
		if size > apivalidation.TotalAnnotationSizeLimitB {
			errs = append(errs, field.TooLong(path(), "", apivalidation.TotalAnnotationSizeLimitB))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return fmt.Errorf("the converter set invalid %s: %s", name, strings.Join(msgs, "; "))
}

const maxRememberedKeys = 4096

var (
	validKeys      sync.Map // string → struct{}
	validKeysCount atomic.Int32
)

func knownValidKey(k string) bool {
	_, ok := validKeys.Load(k)
	return ok
}

func rememberValidKey(k string) {
	if validKeysCount.Load() < maxRememberedKeys {
		if _, loaded := validKeys.LoadOrStore(k, struct{}{}); !loaded {
			validKeysCount.Add(1)
		}
	}
}
