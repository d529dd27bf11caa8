package gotmpl

import (
	"strings"
	"testing"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
)

// orkestra migrate translates a call to a function of upstream's catalog
// that this runtime gained to its CEL counterpart (the exact CEL, then
// equivalence with the legacy engine on generated objects), or keeps the
// template and says why.
func TestTranslateCatalogFunctions(t *testing.T) {
	trSetup(t)
	defer engine.SetClock(func() time.Time { return time.Date(2026, 7, 14, 10, 0, 0, 0, time.UTC) })()
	cases := []struct {
		name, src string
		to        target
		want      string
		fail      string
	}{
		{"slugify", `{{ slugify .spec.environment }}`, toString, `${slugify(self.spec.environment)}`, ""},
		{"truncateName", `{{ truncateName .spec.environment 5 }}`, toString, `${truncateName(self.spec.environment, 5).trim()}`, ""},
		{"sha256sum", `{{ sha256sum .metadata.name }}`, toString, `${sha256sum(self.metadata.name)}`, ""},
		{"concat", `{{ concat .metadata.name "-" .spec.environment }}`, toString, `${(self.metadata.name + '-' + self.spec.environment).trim()}`, ""},
		{"lookup", `{{ lookup .spec.tier "gold" "g" "silver" "s" }}`, toString, `${(self.spec.tier == 'gold' ? 'g' : self.spec.tier == 'silver' ? 's' : '').trim()}`, ""},
		{"semverCompare", `{{ semverCompare .spec.image "1.0.0" }}`, toInt, `${semverCompare(self.spec.image, '1.0.0')}`, ""},
		{"semverValid", `{{ semverValid .spec.image }}`, toBool, `${semverValid(self.spec.image)}`, ""},
		{"durationSeconds", `{{ durationSeconds .spec.environment }}`, toInt, `${durationSeconds(self.spec.environment)}`, ""},
		{"isValidEmail", `{{ isValidEmail .spec.environment }}`, toBool, `${isValidEmail(self.spec.environment)}`, ""},
		{"cidrContains", `{{ cidrContains "10.0.0.0/8" .spec.environment }}`, toBool, `${cidrContains('10.0.0.0/8', self.spec.environment)}`, ""},
		{"sumQuantity", `{{ sumQuantity "1Gi" "512Mi" }}`, toString, `${sumQuantity('1Gi', '512Mi')}`, ""},
		{"eqTernary", `{{ eqTernary .spec.environment "production" "strict" "permissive" }}`, toString, `${self.spec.?environment.orValue('') == 'production' ? 'strict' : 'permissive'}`, ""},
		{"eqTernary of a number", `{{ eqTernary .spec.replicas "3" "a" "b" }}`, toString, "", "compare a string"},
		{"cronField", `{{ cronField .spec.environment 1 }}`, toString, `${cronField(self.spec.environment, 1)}`, ""},
		{"typeString", `{{ typeString .spec.image }}`, toBool, `${type(self.spec.image) == string}`, ""},
		{"typeNull", `{{ typeNull .spec.environment }}`, toBool, `${!self.spec.?environment.hasValue()}`, ""},
		{"typeList of a string", `{{ typeList .metadata.name }}`, toBool, `${false}`, ""},
		{"typeNumber of untyped", `{{ typeNumber .spec.config }}`, toBool, `${self.spec.?config.optMap(v, (type(v) == int || type(v) == double)).orValue(false)}`, ""},
		{"weekend", `{{ weekend }}`, toBool, `${!weekday()}`, ""},
		{"timeNotInWindow", `{{ timeNotInWindow "09:00" "18:00" }}`, toBool, `${!timeInWindow('09:00', '18:00')}`, ""},
		{"isExpired", `{{ isExpired "2026-07-01T00:00:00Z" "7d" }}`, toBool, `${isExpired('2026-07-01T00:00:00Z', '7d')}`, ""},
		{"getLabel of self", `{{ getLabel . "app" }}`, toString, `${getLabel(self, 'app').trim()}`, ""},
		{"hasCondition of self", `{{ hasCondition . "Ready" }}`, toBool, `${hasCondition(self, 'Ready')}`, ""},
		{"generation of self", `{{ generation . }}`, toInt, `${generation(self)}`, ""},
		{"labelMatches", `{{ labelMatches . "app" "blog" }}`, toBool, `${labelMatches(self, 'app', 'blog')}`, ""},
		{"labelMatches of four pairs", `{{ labelMatches . "a" "1" "b" "2" "c" "3" "d" "4" }}`, toBool, "", "one to three complete key/value pairs"},
		{"getServeTarget", `{{ getServeTarget . }}`, toString, `${getServeTarget(self).trim()}`, ""},
		{"repeat", `{{ repeat .spec.environment 2 }}`, toString, `${repeat(self.spec.environment, 2).trim()}`, ""},
		{"truncate", `{{ truncate .spec.environment 5 }}`, toString, `${truncate(self.spec.environment, 5).trim()}`, ""},
		{"a child", `{{ getLabel .children.deployment "app" }}`, toString, "", "children"},
		{"an object that may be missing", `{{ hasLabel .spec.labels "x" }}`, toBool, `${self.spec.?labels.hasValue() ? hasLabel(self.spec.?labels.value(), 'x') : false}`, ""},
		{"a key that may fail without the object", `{{ hasLabel .spec.labels .spec.environment }}`, toBool, "", "can fail where the object is missing"},
		{"toList", `{{ toList .spec.environment }}`, toString, "", "prints a list as Go does"},
		{"asString", `{{ asString .spec.config }}`, toString, "", "depends on the shape of the data"},
		{"labels", `{{ labels . }}`, toString, "", "typed by its schema"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := c.to.ctx()
			got, err := TranslateValue(c.src, ctx, TranslateOptions{Namespaced: true})
			if c.fail != "" {
				if err == nil || !strings.Contains(err.Error(), c.fail) {
					t.Fatalf("%s: got %q, %v; want untranslatable (%s)", c.src, got, err, c.fail)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", c.src, err)
			}
			if got != c.want {
				t.Errorf("%s\n got: %s\nwant: %s", c.src, got, c.want)
			}
			checkValueEquivalent(t, c.src, got, ctx)
		})
	}
}
