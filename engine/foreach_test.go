package engine_test

import (
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
)

// forEach: the item is typed by the list's item schema in CEL (each, the
// alias) and in legacy templates (.item, the alias); a map gives its key and
// value. Upstream: pkg/types/foreach.go, pkg/runtime/reconciler/docs/05-foreach.md.
func TestForEachCompiles(t *testing.T) {
	_, plan, diags := compileBody(t, `      operatorBox:
        onReconcile:
          deployments:
            - name: "${self.metadata.name}-${each.name}"
              image: "${self.spec.image}"
              replicas: "${each.?replicas.orValue(1) + index}"
              forEach: {field: spec.regions}
              when: "each.name != 'skip'"
            - name: "{{ .metadata.name }}-{{ .region.name }}"
              image: "{{ .spec.image }}"
              replicas: "{{ .item.replicas }}"
              forEach: {field: spec.regions, as: region}
          configMaps:
            - name: "${self.metadata.name}-${each}"
              data: {size: "${string(value.size)}"}
              forEach: {field: .spec.shards}
`)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	rs := plan.Entries[0].Hooks["onReconcile"]
	// Kinds apply in order: configMaps before deployments.
	if fe := rs[1].ForEach; fe == nil || fe.Single() == nil || fe.Single().Map || fe.Limit != 10 || !fe.Bounded {
		t.Errorf("list forEach = %+v", fe)
	}
	if fe := rs[0].ForEach; fe == nil || fe.Single() == nil || !fe.Single().Map || fe.Limit != 6 || strings.Join(fe.Single().Path, ".") != "spec.shards" {
		t.Errorf("map forEach = %+v", fe)
	}
}

func TestForEachErrors(t *testing.T) {
	for _, tc := range []struct{ name, decl, want string }{
		{"name does not depend on the item", `            - name: "${self.metadata.name}-web"
              image: x
              forEach: {field: spec.regions}
`, `11:21: [app] operatorBox.onReconcile.deployments[0].name: forEach makes one child per item of spec.regions, but the name does not depend on the item, so every item would name the same object; use it in the name, e.g. name: "${self.metadata.name}-${each}" (CEL: each, index; legacy: {{ .item }}, {{ .index }})`},
		{"the default name", `            - image: x
              forEach: {field: spec.regions, as: region}
`, `11:15: [app] operatorBox.onReconcile.deployments[0].name: forEach makes one child per item of spec.regions, but the name does not depend on the item`},
		{"a field of self named like the item is not the item", `            - name: "${self.spec.image}"
              image: x
              forEach: {field: spec.regions}
`, `does not depend on the item`},
		{"a misspelt item field", `            - name: "${each.nam}"
              image: x
              forEach: {field: spec.regions}
`, `11:29: [app] operatorBox.onReconcile.deployments[0].name: expression ${each.nam}: undefined field 'nam'`},
		{"a misspelt legacy item field", `            - name: "{{ .item.nam }}"
              image: x
              forEach: {field: spec.regions}
`, `unknown field .item.nam: item has no field "nam"`},
		{"not a list or map", `            - name: "${each}"
              image: x
              forEach: {field: spec.image}
`, `13:32: [app] operatorBox.onReconcile.deployments[0].forEach.field: spec.image is a string; forEach iterates a list (one child per item) or a map (one child per entry)`},
		{"not in the schema", `            - name: "${each}"
              image: x
              forEach: {field: spec.region}
`, `13:32: [app] operatorBox.onReconcile.deployments[0].forEach.field: spec.region is not in the schema of v1; did you mean "regions"?`},
		{"the item stays in its declaration", `            - name: "${self.metadata.name}-${each.name}"
              image: x
              forEach: {field: spec.regions}
            - name: "${self.metadata.name}-${each.name}"
              image: x
`, `14:46: [app] operatorBox.onReconcile.deployments[1].name: expression ${each.name}: undeclared reference to 'each'`},
		{"the legacy item stays in its declaration", `            - name: "{{ .metadata.name }}-{{ .item.name }}"
              image: x
              forEach: {field: spec.regions}
            - name: "{{ .metadata.name }}-{{ .item.name }}"
              image: x
`, `14:47: [app] operatorBox.onReconcile.deployments[1].name: .item is not available in this runtime`},
		{"value of a list", `            - name: "${self.metadata.name}-${value}"
              image: x
              forEach: {field: spec.regions}
`, `undeclared reference to 'value'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, diags := compileBody(t, "      operatorBox:\n        onReconcile:\n          deployments:\n"+tc.decl)
			got := strings.ReplaceAll(diags.Errors().Error(), p+":", "")
			if !strings.Contains(got, tc.want) {
				t.Errorf("errors:\n%s\nwant %q", got, tc.want)
			}
		})
	}
}

var _ = engine.DefaultMaxForEach
