package engine_test

import (
	"strings"
	"testing"
)

// queue.behaviour compiled: the rule fires at its share of maxDepth and
// drops only when its condition holds; without maxDepth it warns (it drops
// nothing, as upstream).
func TestQueueDrop(t *testing.T) {
	_, plan, diags := compileBody(t, `      queue:
        maxDepth: 10
        behaviour:
          onThreshold:
            value: 70
            when: ["self.spec.image != 'vip'"]
      operatorBox:
        onReconcile: {}
`)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	d := plan.Entries[0].QueueDrop
	obj := func(image string) map[string]any {
		return map[string]any{"apiVersion": "test.orkestra.io/v1", "kind": "App", "metadata": map[string]any{"name": "a"}, "spec": map[string]any{"image": image}}
	}
	for _, tc := range []struct {
		depth, max int
		image      string
		want       bool
	}{
		{6, 10, "web", false}, // below 70%
		{7, 10, "web", true},  // at 70%
		{9, 10, "vip", false}, // the condition keeps it
		{7, 0, "web", false},  // no maxDepth: nothing is dropped
	} {
		got, err := d.Drops(tc.depth, tc.max, obj(tc.image))
		if err != nil || got != tc.want {
			t.Errorf("depth %d of %d, image %s: drops %v (%v), want %v", tc.depth, tc.max, tc.image, got, err, tc.want)
		}
	}
	_, _, diags = compileBody(t, "      queue:\n        behaviour:\n          onLimit: {drop: true}\n      operatorBox:\n        onReconcile: {}\n")
	if !strings.Contains(diags.Error(), "queue.behaviour drops nothing without queue.maxDepth (as upstream)") {
		t.Errorf("no warning for a behaviour without maxDepth:\n%v", diags)
	}
}
