package engine_test

import (
	"reflect"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// The shape follows the original engine's pkg/children/children.go
// (ReadChildren: children["deployments"] = map name→object,
// children["deployment"] = firstValue(m)) and pkg/children/read.go
// (readResourceGroup gives every child a status map; firstValue returns
// {"_placeholder": true, "status": {}} for an empty group).
func TestChildrenView(t *testing.T) {
	web := map[string]any{"metadata": map[string]any{"name": "web"}, "status": map[string]any{"readyReplicas": int64(2)}}
	api := map[string]any{"metadata": map[string]any{"name": "api"}}
	got := engine.ChildrenView(map[string][]map[string]any{
		"deployments":            {web, api},
		"persistentVolumeClaims": nil,
		"unknownKind":            {web},
	})
	apiWithStatus := map[string]any{"metadata": map[string]any{"name": "api"}, "status": map[string]any{}}
	want := map[string]any{
		"deployments":            map[string]any{"web": web, "api": apiWithStatus},
		"deployment":             apiWithStatus, // "api" sorts first
		"persistentvolumeclaims": map[string]any{},
		"pvc":                    map[string]any{"_placeholder": true, "status": map[string]any{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ChildrenView:\n got %#v\nwant %#v", got, want)
	}
	if _, ok := api["status"]; ok {
		t.Fatal("ChildrenView modified an observed object (the informer cache's)")
	}
}

// Every kind a hook may declare has its keys under .children, each its own:
// a kind missing them would silently be absent from .children.
func TestChildrenViewHasEveryKind(t *testing.T) {
	owner := map[string]string{}
	for kind, spec := range katalog.ResourceKinds {
		got := engine.ChildrenView(map[string][]map[string]any{kind: nil})
		placeholder := map[string]any{engine.PlaceholderKey: true, "status": map[string]any{}}
		if len(got) != 2 || !reflect.DeepEqual(got[spec.Children.Plural], map[string]any{}) || !reflect.DeepEqual(got[spec.Children.Singular], placeholder) {
			t.Errorf("%s: ChildrenView of a declared kind without children = %v, want %q empty and %q the placeholder", kind, got, spec.Children.Plural, spec.Children.Singular)
		}
		for _, key := range []string{spec.Children.Plural, spec.Children.Singular} {
			if prev, dup := owner[key]; dup {
				t.Errorf(".children.%s is the key of both %s and %s", key, prev, kind)
			}
			owner[key] = kind
		}
	}
}
