package cel

import (
	"testing"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"
	_ "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
)

func TestProbe(t *testing.T) {
	es := environment.MustBaseEnvSet(version.MajorMinor(1, 37))
	es2, err := es.Extend(environment.VersionedOptions{IntroducedVersion: version.MajorMinor(1, 0), EnvOptions: []cel.EnvOption{cel.Variable("self", cel.DynType), cel.EnableIdentifierEscapeSyntax()}})
	if err != nil {
		t.Fatal(err)
	}
	env := es2.NewExpressionsEnv()
	for _, src := range []string{"self.`foo-bar`", "self.a.b", "'x'.upperAscii()", "[1,2].sum()", "semver('1.2.3').major()"} {
		ast, iss := env.Compile(src)
		if iss.Err() != nil {
			t.Log(src, iss.Err())
			continue
		}
		c, err := env.EstimateCost(ast, &library.CostEstimator{})
		t.Log(src, ast.OutputType(), c, err)
	}
}
