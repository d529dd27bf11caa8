package katalog

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// aliasBomb is a "billion laughs" katalog: each level's list holds the
// previous one nine times, 9^8 values in under 1 KB.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString(header + entry + "      operatorBox:\n        onCreate:\n          configMaps:\n            - name: x\n              data:\n")
	b.WriteString(`                a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	prev := "a"
	for _, c := range "bcdefgh" {
		fmt.Fprintf(&b, "                %c: &%c [%s]\n", c, c, strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ","))
		prev = string(c)
	}
	return b.String()
}

// Issue 15 item 2: a 1 KB katalog of nested aliases made check take 3 GB in
// 13 s. The expansion is counted and stops at MaxAliasNodes with an error at
// the alias that crossed it.
func TestAliasBombFailsFast(t *testing.T) {
	body := aliasBomb()
	if len(body) > 1024 {
		t.Fatalf("the bomb is %d bytes, want under 1 KB", len(body))
	}
	p := writeKatalog(t, body)
	start := time.Now()
	_, diags := Load(p)
	took := time.Since(start)
	want := p + ":24:24: [site] operatorBox.onCreate.configMaps[0].data.f[0]: YAML alias *e expands to more than 100000 values (the limit on alias expansion in one katalog load); write the values out or use fewer nested aliases"
	var found bool
	for _, e := range diags.Errors() {
		found = found || e.Error() == want
	}
	if !found {
		t.Fatalf("errors:\n%v\nwant %s", diags.Errors(), want)
	}
	if took > 2*time.Second {
		t.Errorf("loading the bomb took %v, want it to stop fast", took)
	}
}

// Aliases within the limit keep working.
func TestAliasesWithinLimit(t *testing.T) {
	p := writeKatalog(t, header+entry+`      operatorBox:
        onCreate:
          configMaps:
            - name: a
              data: &d {k: v}
            - name: b
              data: *d
`)
	k, diags := Load(p)
	if diags.HasErrors() {
		t.Fatal(diags.Errors())
	}
	cms := k.CRDs[0].Box.Hooks["onCreate"].Resources
	if len(cms) != 2 {
		t.Fatalf("%d resources, want 2", len(cms))
	}
}
