package katalog

import (
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"
)

// Sentinels (upstream v0.7.18: pkg/runtime/sentinel) are named booleans
// saying what changed between two versions of an object's metadata. An
// entry declares the ones it computes under preReconcile.sentinels; its
// gates then read them, as a shorthand list (`sentinels: [..]`, any true
// passes) or by name in their conditions. A watch's enqueueGate computes
// them on the watched object, and its list declares its own.

// SentinelNames are upstream's 14 sentinels, in its order.
var SentinelNames = []string{
	"generationChanged", "labelsChanged", "annotationsChanged", "deletionStarted", "finalizersChanged",
	"nameChanged", "namespaceChanged", "generateNameChanged", "uidChanged", "resourceVersionChanged",
	"creationTimestampChanged", "deletionGracePeriodSecondsChanged", "ownerReferenceChanged", "managedFieldsChanged",
}

// SentinelManagedFields is the sentinel that needs metadata.managedFields,
// which the operator's caches drop unless something reads it.
const SentinelManagedFields = "managedFieldsChanged"

// IsSentinel reports one of SentinelNames.
func IsSentinel(name string) bool { return slices.Contains(SentinelNames, name) }

// sentinelList decodes a list of sentinel names: each one of
// SentinelNames (did-you-mean otherwise), none twice.
func (d *decoder) sentinelList(n *yaml.Node, path string) []string {
	var out []string
	for i, item := range d.list(n, path) {
		ipath := fmt.Sprintf("%s[%d]", path, i)
		name := d.str(item, ipath)
		switch {
		case !IsSentinel(name):
			d.errorf(item, ipath, "unknown sentinel %q%s", name, didYouMeanOrList(name, SentinelNames))
		case slices.Contains(out, name):
			d.errorf(item, ipath, "sentinel %s is listed twice; list it once", name)
		default:
			out = append(out, name)
		}
	}
	if l := Resolve(n); l != nil && l.Kind == yaml.SequenceNode && len(l.Content) == 0 {
		d.errorf(n, path, "sentinels lists no sentinel; list some (%s, …) or remove the key", SentinelNames[0])
	}
	return out
}

// gateSentinels decodes a gate's sentinels: list, each declared under
// preReconcile.sentinels (declared); selfDeclaring (a watch's enqueueGate)
// lets the list declare its own.
func (d *decoder) gateSentinels(o object, path string, declared []string, selfDeclaring bool) []string {
	f, ok := o["sentinels"]
	if !ok {
		return nil
	}
	names := d.sentinelList(f.value, path+".sentinels")
	if selfDeclaring {
		return names
	}
	l := Resolve(f.value)
	if l == nil || l.Kind != yaml.SequenceNode {
		return names
	}
	for _, item := range l.Content {
		name := item.Value
		if !IsSentinel(name) || slices.Contains(declared, name) {
			continue
		}
		d.errorf(item, path+".sentinels", "sentinel %s is not declared under preReconcile.sentinels, so it is never computed; add it there (sentinels: [%s])", name, name)
	}
	return names
}
