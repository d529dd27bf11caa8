package katalog

import (
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// operatorBox.runtime is upstream's newest (v0.7.18) home of the settings
// that govern a custom resource's life rather than what it reconciles
// into. Most of its keys are constructs that existed under other names:
// each is decoded by the same code as its older spelling, and writing both
// is an error naming both places.
var (
	runtimeKeys          = append(movedInto("operatorBox.runtime"), "cleanup")
	unimplementedRuntime = []string{"autoscale", "deletionProtection", "rollback"}
	cleanupKeys          = []string{"when", "or", "deleteAfter"}
)

// Cleanup is operatorBox.runtime.cleanup: the custom resource is deleted
// once its condition has held for DeleteAfter (upstream: delete a custom
// resource that reached a terminal state).
type Cleanup struct {
	Pos Pos
	// When (all hold) and Or (one holds); at least one is set.
	When, Or *When
	// DeleteAfter is how long the condition must hold; 0 deletes on the
	// first reconcile that finds it holding.
	DeleteAfter    time.Duration
	DeleteAfterPos Pos
}

// runtime decodes operatorBox.runtime into the entry and its box; o is the
// box's own mapping (for the keys it may also hold).
func (d *decoder) runtime(e *CRDEntry, box *OperatorBox, o object, n *yaml.Node, path string) {
	ro := d.mapping(n, path, runtimeKeys, unimplementedRuntime)
	if f, ok := ro["finalizers"]; ok {
		if prev, both := o["finalizers"]; both {
			d.writtenTwice(f.key, path+".finalizers", moveOf("operatorBox.runtime", "finalizers"), d.pos(prev.key))
		} else {
			box.Finalizers = d.strList(f.value, path+".finalizers")
		}
	}
	if f, ok := ro["allowedNamespaces"]; ok {
		if r := e.Namespaces; r != nil && r.allowedPos != (Pos{}) {
			d.writtenTwice(f.key, path+".allowedNamespaces", moveOf("operatorBox.runtime", "allowedNamespaces"), r.allowedPos)
		} else {
			d.allowedNamespaces(e, f, path+".allowedNamespaces")
		}
	}
	if f, ok := ro["cleanup"]; ok {
		box.Cleanup = d.cleanup(f.value, path+".cleanup")
	}
}

func (d *decoder) cleanup(n *yaml.Node, path string) *Cleanup {
	co := d.mapping(n, path, cleanupKeys, nil)
	c := &Cleanup{Pos: d.pos(Resolve(n))}
	c.When, c.Or = d.gateConditions(co, path)
	if c.When.Empty() && c.Or.Empty() {
		d.errorf(n, path, "cleanup deletes the custom resource once its condition holds: give it when: or or:, e.g. when: [\"self.status.?phase.orValue('') == 'Succeeded'\"]")
	}
	if f, ok := co["deleteAfter"]; ok {
		raw := d.str(f.value, path+".deleteAfter")
		v, err := ParseDuration(raw)
		switch {
		case strings.TrimSpace(raw) == "never":
			// ParseDuration reads never as 0, which here would delete at once.
			d.errorf(f.value, path+".deleteAfter", "deleteAfter: never would keep every custom resource; remove cleanup instead")
		case err != nil:
			d.errorf(f.value, path+".deleteAfter", "%v", err)
		default:
			c.DeleteAfter, c.DeleteAfterPos = v, d.pos(f.value)
		}
	}
	return c
}

// String describes the cleanup for events and messages.
func (c *Cleanup) String() string {
	return fmt.Sprintf("operatorBox.runtime.cleanup (deleteAfter %s)", c.DeleteAfter)
}
