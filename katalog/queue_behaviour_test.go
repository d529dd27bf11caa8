package katalog

import (
	"strings"
	"testing"
)

// queue.behaviour with upstream's rules (orkspace/orkestra pkg/types/types.go
// QueueBehaviour): onLimit fires at maxDepth and needs drop: true or a
// condition; onThreshold needs value 1–99 and always drops; when both are
// declared onThreshold decides alone.
func TestQueueBehaviourDecode(t *testing.T) {
	q := func(b string) string {
		return header + entry + "      queue:\n        maxDepth: 10\n        behaviour:\n" + b
	}
	k, diags := Load(writeKatalog(t, q("          onThreshold:\n            value: 70\n            when: [\"self.spec.?tier.orValue('') != 'gold'\"]\n")))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	b := k.CRDs[0].Queue.Behaviour
	if b == nil || b.Percent != 70 || b.When.Empty() || b.Path != "queue.behaviour.onThreshold" {
		t.Fatalf("decoded %+v", b)
	}
	k, _ = Load(writeKatalog(t, q("          onLimit: {drop: true}\n")))
	if b := k.CRDs[0].Queue.Behaviour; b == nil || b.Percent != 100 || !b.When.Empty() {
		t.Fatalf("onLimit decoded %+v", b)
	}
	cases := []struct{ name, body, want string }{
		{"onLimit without drop", q("          onLimit: {}\n"), "17:11: [site] queue.behaviour.onLimit: onLimit drops new events once the queue holds maxDepth objects: write drop: true"},
		{"onLimit drop false", q("          onLimit: {drop: false}\n"), "17:11: [site] queue.behaviour.onLimit: onLimit drops new events"},
		{"onThreshold without value", q("          onThreshold: {drop: true}\n"), "17:11: [site] queue.behaviour.onThreshold.value: onThreshold needs value:"},
		{"onThreshold value 100", q("          onThreshold: {value: 100}\n"), `17:32: [site] queue.behaviour.onThreshold.value: value is a percentage of maxDepth from 1 to 99, got "100"`},
		{"empty behaviour", q("          {}\n"), "17:11: [site] queue.behaviour: behaviour needs onLimit: {drop: true} or onThreshold: {value: PERCENT}"},
		{"unknown key", q("          onLimt: {drop: true}\n"), `17:11: [site] queue.behaviour.onLimt: unknown key "onLimt"; did you mean "onLimit"?`},
		{"warn drop false", q("          onThreshold: {value: 50, drop: false}\n"), "warning: [site] queue.behaviour.onThreshold.drop: onThreshold always drops (as upstream); drop: false changes nothing"},
		{"warn both", q("          onLimit: {drop: true}\n          onThreshold: {value: 50}\n"), "warning: [site] queue.behaviour.onLimit: onThreshold is declared too and decides alone"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeKatalog(t, tc.body)
			_, diags := Load(p)
			var got []string
			for _, d := range diags {
				s := strings.ReplaceAll(d.Error(), p+":", "")
				if strings.Contains(s, tc.want) {
					return
				}
				got = append(got, s)
			}
			t.Fatalf("want %q in\n%s", tc.want, strings.Join(got, "\n"))
		})
	}
}
