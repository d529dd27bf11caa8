package engine

import (
	"sort"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/katalog"
)

// property is the schema of s's field name, nil when s does not declare it.
func property(s *structuralschema.Structural, name string) *structuralschema.Structural {
	if s == nil || s.Properties == nil {
		return nil
	}
	p, ok := s.Properties[name]
	if !ok {
		return nil
	}
	return &p
}

// PropertyNames are the declared fields of s, sorted, for suggestions.
func PropertyNames(s *structuralschema.Structural) []string {
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// didYouMeanFields suggests a declared field close to key, or lists them.
func didYouMeanFields(key string, s *structuralschema.Structural) string {
	names := PropertyNames(s)
	if d := katalog.DidYouMean(key, names); d != "" {
		return d
	}
	if len(names) == 0 {
		return ""
	}
	return "; it has " + strings.Join(names, ", ")
}
