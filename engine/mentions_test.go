package engine_test

import "testing"

// TestReadsMetadataTheCachesDrop: an entry reads managedFields or the
// last-applied annotation when its expressions (or a note) may; the
// operator's caches keep them only then.
func TestReadsMetadataTheCachesDrop(t *testing.T) {
	cases := []struct {
		name                 string
		body                 string
		managed, lastApplied bool
	}{
		{"neither", `      operatorBox:
        onReconcile:
          configMaps:
            - name: "${self.metadata.name}"
              data: {image: "${self.spec.image}"}
              annotations: {owner: team}
`, false, false},
		{"reads annotations", `      operatorBox:
        onReconcile:
          configMaps:
            - name: "${self.metadata.name}"
              data: {owner: "${self.metadata.annotations[?'owner'].orValue('')}"}
`, false, true},
		{"declares the annotation", `      operatorBox:
        onReconcile:
          configMaps:
            - name: "${self.metadata.name}"
              annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}"}
`, false, true},
		{"legacy condition on annotations", `      operatorBox:
        onReconcile:
          configMaps:
            - name: "${self.metadata.name}"
              when:
                - field: metadata.annotations.owner
                  equals: team
`, false, true},
		{"status field reads managedFields", `      operatorBox:
        status:
          fields:
            - path: writers
              value: "${string(self.metadata.?managedFields.orValue([]).size())}"
`, true, false},
		{"normalize reads annotations", `      normalize:
        spec:
          image: "${self.metadata.annotations[?'image'].orValue(self.spec.image)}"
`, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, plan, diags := compileBody(t, c.body)
			if diags.HasErrors() {
				t.Fatalf("compile: %v", diags.Errors())
			}
			e := plan.Entry("app")
			if e.ReadsManagedFields != c.managed || e.ReadsLastApplied != c.lastApplied {
				t.Errorf("ReadsManagedFields %v, ReadsLastApplied %v; want %v, %v", e.ReadsManagedFields, e.ReadsLastApplied, c.managed, c.lastApplied)
			}
		})
	}
}
