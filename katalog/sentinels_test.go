package katalog

import (
	"reflect"
	"testing"
)

// The 14 names of upstream's pkg/runtime/sentinel/sentinel.go
// (ValidSentinels), declared under preReconcile.sentinels and read by the
// gates (pkg/types/types_operatorbox.go, InvalidGateSentinels).
func TestSentinelDeclarations(t *testing.T) {
	if len(SentinelNames) != 14 {
		t.Fatalf("%d sentinel names", len(SentinelNames))
	}
	k, _, diags := loadBox(t, `
preReconcile:
  sentinels: [generationChanged, labelsChanged, managedFieldsChanged]
  reconcileGate:
    sentinels: [generationChanged]
  enqueueGate:
    sentinels: [labelsChanged, generationChanged]
`)
	wantDiags(t, diags)
	g := k.CRDs[0].Box.Gates
	if !reflect.DeepEqual(g.Sentinels, []string{"generationChanged", "labelsChanged", "managedFieldsChanged"}) ||
		!reflect.DeepEqual(g.ReconcileSentinels, []string{"generationChanged"}) ||
		!reflect.DeepEqual(g.EnqueueSentinels, []string{"labelsChanged", "generationChanged"}) {
		t.Errorf("gates %+v", g)
	}
}

func TestSentinelErrors(t *testing.T) {
	_, _, diags := loadBox(t, `
preReconcile:
  sentinels: [generationChange, labelsChanged, labelsChanged]
  reconcileGate:
    sentinels: [annotationsChanged]
    when: "self.spec.replicas > 0"
  enqueueGate:
    sentinels: []
watch:
  - apiVersion: v1
    kind: ConfigMap
    enqueueGate:
      sentinels: [uidChange]
`)
	wantDiags(t, diags,
		`16:23: [site] operatorBox.preReconcile.sentinels[0]: unknown sentinel "generationChange"; did you mean "generationChanged"?`,
		`16:56: [site] operatorBox.preReconcile.sentinels[2]: sentinel labelsChanged is listed twice; list it once`,
		`18:25: [site] operatorBox.preReconcile.reconcileGate.sentinels: sentinel annotationsChanged is not declared under preReconcile.sentinels, so it is never computed; add it there (sentinels: [annotationsChanged])`,
		`18:13: warning: [site] operatorBox.preReconcile.reconcileGate.sentinels: with a sentinels list the gate passes when one of them is true and its when/or are not evaluated (as upstream); to combine them, read the sentinels in when: (CEL sentinels.<name>, legacy {{ <name> }}) and remove the list`,
		`21:24: [site] operatorBox.preReconcile.enqueueGate.sentinels: sentinels lists no sentinel; list some (generationChanged, …) or remove the key`,
		`26:27: [site] operatorBox.watch[0].enqueueGate.sentinels[0]: unknown sentinel "uidChange"; did you mean "uidChanged"?`)
}
