package katalog

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Readiness and order of a custom resource's children, as kro's
// ResourceGraphDefinitions declare them (kro:
// website/docs/docs/concepts/rgd/02-resource-definitions/03-readiness.md):
// `readyWhen` says when a child is ready (CEL over the observed child),
// `id` names a declaration, `dependsOn` makes a declaration wait until the
// ones it names are ready (or created). The custom resource's Ready
// condition holds when every applicable child is ready, and children are
// deleted in the reverse of that order.

// childConditions are what a child may wait for: ready (the default) or
// created.
var childConditions = []string{DependencyReady, DependencyCreated}

// readiness decodes one of readinessKeys of a declaration; false when key
// is not one of them.
func (d *decoder) readiness(r *Resource, k, v *yaml.Node, path string) bool {
	switch k.Value {
	case "id":
		r.ID, r.IDPos = d.str(v, path), d.pos(v)
		if !identifier.MatchString(r.ID) {
			d.errorf(v, path, "id %q must be an identifier (letters, digits, _), such as database: dependsOn names it", r.ID)
		}
	case "readyWhen":
		r.ReadyWhen = d.when(v, path)
	case "dependsOn":
		r.DependsOn = d.dependencies(v, path, "declaration id", childConditions)
	default:
		return false
	}
	if r.Hook == OnDelete {
		d.errorf(k, path, "%s does not apply to onDelete children: they are made once the custom resource is being deleted, and onDelete Jobs are already waited for; declare it on an onCreate or onReconcile child", k.Value)
	}
	return true
}

// checkChildDependencies validates, per entry, the ids and dependsOn of its
// children (motif resources included): ids are unique, dependsOn names an
// id of the entry's onCreate or onReconcile children (not its own), and
// there is no cycle.
func checkChildDependencies(k *Katalog, diags *Diagnostics) {
	for _, e := range k.CRDs {
		if e.Box == nil {
			continue
		}
		add := func(p Pos, field, format string, args ...any) {
			*diags = append(*diags, Diagnostic{Pos: p, Entry: e.Name, Field: field, Message: fmt.Sprintf(format, args...)})
		}
		byID := map[string]*Resource{}
		var ids []string
		for _, r := range e.Box.Declarations() {
			if r.ID == "" {
				continue
			}
			if prev, dup := byID[r.ID]; dup {
				add(r.IDPos, "operatorBox."+r.FieldPath()+".id", "id %q is already the id of %s (%s); ids name one declaration each", r.ID, prev.FieldPath(), prev.IDPos)
				continue
			}
			byID[r.ID] = r
			ids = append(ids, r.ID)
		}
		for _, r := range e.Box.Declarations() {
			for _, dep := range r.DependsOn {
				field := "operatorBox." + r.FieldPath() + ".dependsOn"
				switch {
				case dep.Name == r.ID:
					add(dep.Pos, field, "a child cannot depend on itself")
				case byID[dep.Name] == nil:
					add(dep.Pos, field, "dependsOn names %q, which is not the id of a child of this entry%s; give the child it waits for id: %s", dep.Name, idChoices(dep.Name, ids), dep.Name)
				}
			}
		}
		cycle := findCycle(ids, func(id string) []*Dependency { return byID[id].DependsOn })
		if cycle != nil {
			r := byID[cycle[0]]
			add(r.DependsOn[0].Pos, "operatorBox."+r.FieldPath()+".dependsOn", "dependsOn makes a cycle: %s; none of these children could ever be made", strings.Join(cycle, " → "))
		}
	}
}

func idChoices(name string, ids []string) string {
	if len(ids) == 0 {
		return " (no child declares an id)"
	}
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	if s := DidYouMean(name, sorted); s != "" {
		return s
	}
	return " (ids: " + strings.Join(sorted, ", ") + ")"
}

// Declarations are the onCreate and onReconcile declarations, in hook
// order: the children reconciles make.
func (b *OperatorBox) Declarations() []*Resource {
	var out []*Resource
	for _, h := range []string{OnCreate, OnReconcile} {
		if hook := b.Hooks[h]; hook != nil {
			out = append(out, hook.Resources...)
		}
	}
	return out
}
