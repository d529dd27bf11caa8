package engine_test

import (
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
)

// Several iterators: one child per combination, each alias typed by its
// field's item schema; the limit is the product of the fields' bounds, or
// the default cap of 1 000 when one is unbounded. kro:
// website/docs/docs/concepts/rgd/02-resource-definitions/04-collections.md.
func TestForEachProductCompiles(t *testing.T) {
	_, plan, diags := compileBody(t, `      operatorBox:
        onReconcile:
          deployments:
            - name: "${self.metadata.name}-${region.name}-${tier}"
              image: "${self.spec.image}"
              replicas: "${region.?replicas.orValue(1) + index}"
              forEach:
                - {field: spec.regions, as: region}
                - tier: spec.bounded
          configMaps:
            - name: "${self.metadata.name}-${index}"
              data: {host: "${host}", shard: "${shard}"}
              forEach:
                - host: ${self.spec.hosts}
                - {field: spec.shards, as: shard}
`)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	rs := plan.Entries[0].Hooks["onReconcile"]
	cm, dep := rs[0].ForEach, rs[1].ForEach
	if dep.Single() != nil || dep.Limit != 80 || !dep.Bounded || dep.Field != "spec.regions × spec.bounded" {
		t.Errorf("bounded product = %+v", dep)
	}
	if cm.Limit != engine.DefaultMaxForEach || cm.Bounded || !cm.Iterators[1].Map {
		t.Errorf("unbounded product = %+v", cm)
	}
	if engine.DefaultMaxForEach != 1000 {
		t.Errorf("default cap = %d, want kro's 1000", engine.DefaultMaxForEach)
	}
}

func TestForEachProductErrors(t *testing.T) {
	for _, tc := range []struct{ name, decl, want string }{
		{"a combination the name does not tell apart", `            - name: "${self.metadata.name}-${region.name}"
              image: x
              forEach:
                - {field: spec.regions, as: region}
                - {field: spec.bounded, as: tier}
`, `11:21: [app] operatorBox.onReconcile.deployments[0].name: forEach makes one child per combination of spec.regions × spec.bounded, but the name (or namespace) does not read tier, so two combinations can name the same object; use every alias in the name, e.g. name: "${self.metadata.name}-${region}-${tier}", or index (the combination's position)`},
		{"an iterator without an alias", `            - name: "${index}"
              image: x
              forEach:
                - {field: spec.regions, as: region}
                - {field: spec.bounded}
`, `15:19: [app] operatorBox.onReconcile.deployments[0].forEach[1]: with several iterators each needs an alias (as: region, or {region: spec.bounded}): each and value would not say which item they mean`},
		{"one alias twice", `            - name: "${index}"
              image: x
              forEach:
                - {field: spec.regions, as: x}
                - {x: spec.bounded}
`, `15:20: [app] operatorBox.onReconcile.deployments[0].forEach[1].as: the alias "x" is already the item of spec.regions; give each iterator its own`},
		{"each means nothing with several", `            - name: "${each}-${index}"
              image: x
              forEach:
                - {field: spec.regions, as: region}
                - {field: spec.bounded, as: tier}
`, `undeclared reference to 'each'`},
		{"an expression is not a field", `            - name: "${region}"
              image: x
              forEach:
                - region: ${self.spec.regions.filter(r, r.name != '')}
`, `forEach iterates a field of the custom resource, a dot path such as spec.regions (or ${self.spec.regions}), not an expression; got "${self.spec.regions.filter(r, r.name != '')}". To leave items out, give the declaration a when: over the item`},
		{"an alias typed by its field", `            - name: "${region.nam}-${tier}"
              image: x
              forEach:
                - {field: spec.regions, as: region}
                - {field: spec.bounded, as: tier}
`, `undefined field 'nam'`},
		{"an empty list", `            - name: "${self.metadata.name}"
              image: x
              forEach: []
`, `forEach lists no iterator`},
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
