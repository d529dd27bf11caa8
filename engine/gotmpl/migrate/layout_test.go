package migrate

import (
	"strings"
	"testing"
)

const layoutHead = "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nspec:\n  crds:\n"

// Each key the table moves, in both directions, with the comments around
// it; the list form of spec.crds; an admission: block that exists already.
func TestRelayoutMovesAndBack(t *testing.T) {
	flat := layoutHead + `    - name: site
      apiTypes: {group: g, version: v1, kind: Site}
      admission:
        validation:
          rules: []
      # paths
      conversion:   # both ways
        paths: []
        # end of paths
      operatorBox:
        finalizers:
        - a
        - b
        onCreate: {}
`
	newest := layoutHead + `    - name: site
      apiTypes: {group: g, version: v1, kind: Site}
      admission:
        validation:
          rules: []
        # paths
        conversion:   # both ways
          paths: []
          # end of paths
      operatorBox:
        runtime:
          finalizers:
          - a
          - b
        onCreate: {}
`
	out, moved, err := Relayout("k.yaml", []byte(flat), LayoutNewest)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != newest {
		t.Fatalf("newest:\n%s\nwant:\n%s", out, newest)
	}
	if len(moved) != 2 || moved[0].Line != 11 || moved[0].From != "conversion" || moved[0].To != "admission.conversion" || moved[1].From != "operatorBox.finalizers" || moved[1].To != "operatorBox.runtime.finalizers" {
		t.Errorf("moved: %+v", moved)
	}
	again, moved, err := Relayout("k.yaml", out, LayoutNewest)
	if err != nil || len(moved) != 0 || string(again) != newest {
		t.Errorf("newest again: %v, moved %v", err, moved)
	}
	back, moved, err := Relayout("k.yaml", out, LayoutFlat)
	if err != nil {
		t.Fatal(err)
	}
	wantBack := layoutHead + `    - name: site
      apiTypes: {group: g, version: v1, kind: Site}
      validation:
        rules: []
      # paths
      conversion:   # both ways
        paths: []
        # end of paths
      operatorBox:
        finalizers:
        - a
        - b
        onCreate: {}
`
	if string(back) != wantBack || len(moved) != 3 {
		t.Fatalf("flat (%d moved):\n%s\nwant:\n%s", len(moved), back, wantBack)
	}
}

func TestRelayoutErrors(t *testing.T) {
	cases := []struct{ name, layout, body, want string }{
		{"unknown layout", "newer", "", `unknown layout "newer"; use newest or flat`},
		{"no box to hold runtime", LayoutNewest, "    site:\n      allowedNamespaces: [a]\n",
			`k.yaml:6: cannot move allowedNamespaces of entry site: the entry has no operatorBox, and adding one would make it reconcile; declare allowedNamespaces by hand`},
		{"flow map", LayoutNewest, "    site: {conversion: {paths: []}}\n",
			`k.yaml:5: cannot move conversion of entry site to admission.conversion: it is written inside a flow map {…}`},
		{"first key of a list item", LayoutNewest, "    - conversion:\n        paths: []\n      name: site\n",
			`k.yaml:5: cannot move conversion of entry site to admission.conversion: conversion: does not start its line (the first key of a list item?)`},
		{"box left empty", LayoutFlat, "    site:\n      operatorBox:\n        runtime:\n          allowedNamespaces: [a]\n",
			`k.yaml:8: cannot move operatorBox.runtime.allowedNamespaces of entry site to allowedNamespaces: it would leave operatorBox empty`},
		{"admission as a flow map", LayoutNewest, "    site:\n      admission: {}\n      conversion:\n        paths: []\n",
			`k.yaml:7: cannot move conversion of entry site to admission.conversion: admission is empty or written as a flow map {…}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Relayout("k.yaml", []byte(layoutHead+tc.body), tc.layout)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}

// operatorBox.watch moves to operatorBox.observe.watch (upstream v0.7.18,
// orkspace/orkestra documentation/reference/schema/02-katalog/27-watch.md)
// and back, beside an observe.events block that stays.
func TestRelayoutMovesWatchIntoObserve(t *testing.T) {
	flat := layoutHead + `    site:
      apiTypes: {group: g, version: v1, kind: Site}
      operatorBox:
        watch:
          - {apiVersion: v1, kind: ConfigMap}
        observe:
          events:
            ready: {reason: Ready}
`
	newest := layoutHead + `    site:
      apiTypes: {group: g, version: v1, kind: Site}
      operatorBox:
        observe:
          events:
            ready: {reason: Ready}
          watch:
            - {apiVersion: v1, kind: ConfigMap}
`
	out, moved, err := Relayout("k.yaml", []byte(flat), LayoutNewest)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != newest || len(moved) != 1 || moved[0].To != "operatorBox.observe.watch" {
		t.Fatalf("newest (moved %+v):\n%s\nwant:\n%s", moved, out, newest)
	}
	back, _, err := Relayout("k.yaml", out, LayoutFlat)
	if err != nil {
		t.Fatal(err)
	}
	if string(back) != flat {
		t.Errorf("back to flat:\n%s\nwant:\n%s", back, flat)
	}
}
