package gotmpl

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"text/template/parse"

	"github.com/orkspace/orkestra-cel/engine"
)

// Sentinels read by name, `{{ generationChanged }}`: upstream's resolver
// adds each declared sentinel as a function without arguments rendering
// "true" or "false" (orkspace/orkestra pkg/template, WithSentinels). Here
// a sentinel is such a function where the place's root has it
// (engine.SentinelsVar: preReconcile gates, a watch's enqueueGate), and
// reads its value from that root.

// sentinel resolves a call of sentinel id, nil (reported) when it is not
// readable here.
func (c *checker) sentinel(id *parse.IdentifierNode) *function {
	name := id.Ident
	var declared []string
	if c.self != nil {
		if s, ok := c.self.Properties[engine.SentinelsVar]; ok {
			for n := range s.Properties {
				declared = append(declared, n)
			}
		}
	}
	switch {
	case slices.Contains(declared, name):
		if c.sentinels == nil {
			c.sentinels = map[string]bool{}
		}
		c.sentinels[name] = true
		c.children = true // it reads a root beyond the object
		return noteSignature
	case declared == nil:
		c.report(int(id.Pos), fmt.Sprintf("%s is a sentinel, readable only in operatorBox.preReconcile's gates and a watch's enqueueGate once declared under preReconcile.sentinels", name))
	default:
		sort.Strings(declared)
		c.report(int(id.Pos), fmt.Sprintf("sentinel %s is not declared here (declared: %s); add it to preReconcile.sentinels", name, strings.Join(declared, ", ")))
	}
	return nil
}

// sentinelFunc is the function sentinel name is called by in one
// evaluation: its value in the data's sentinels root.
func sentinelFunc(name string, st *execState) func() (string, error) {
	return func() (string, error) {
		m, _ := st.data[engine.SentinelsVar].(map[string]any)
		s, _ := m[name].(string)
		return s, nil
	}
}
