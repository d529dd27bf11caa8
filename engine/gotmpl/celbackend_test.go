package gotmpl

import (
	"fmt"
	"os"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	celschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/version"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// kubeCEL is a minimal CEL backend for these tests, built the way the
// Kubernetes API server builds CRD validation: the base environment at the
// default compatibility version, `self` typed by the structural schema (with
// apiVersion, kind and metadata), values through UnstructuredToVal. It
// stands in for engine/cel, which the plan compiles with in production.
type kubeCEL struct{}

func (kubeCEL) CompileValue(src string, ctx *engine.Context) (engine.Expr, katalog.Diagnostics) {
	return nil, katalog.Diagnostics{{Pos: ctx.Pos, Message: "the test CEL backend compiles conditions only"}}
}

func (kubeCEL) CompileCondition(src string, ctx *engine.Context) (engine.Condition, katalog.Diagnostics) {
	fail := func(err error) (engine.Condition, katalog.Diagnostics) {
		return nil, katalog.Diagnostics{{Pos: ctx.Pos, Entry: ctx.Entry, Field: ctx.Field, Message: err.Error()}}
	}
	opts := environment.VersionedOptions{IntroducedVersion: version.MajorMinor(1, 0), EnvOptions: []cel.EnvOption{CELLibrary()}}
	var root *structuralschema.Structural
	if ctx.Self != nil {
		root = model.WithTypeAndObjectMeta(ctx.Self)
		dt := model.SchemaDeclType(root, true).MaybeAssignTypeName("selfType")
		opts.EnvOptions = append(opts.EnvOptions, cel.Variable("self", dt.CelType()))
		opts.DeclTypes = []*apiservercel.DeclType{dt}
	} else {
		opts.EnvOptions = append(opts.EnvOptions, cel.Variable("self", cel.DynType))
	}
	envSet, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Extend(opts)
	if err != nil {
		return fail(err)
	}
	env := envSet.NewExpressionsEnv()
	ast, iss := env.Compile(src)
	if iss.Err() != nil {
		return fail(iss.Err())
	}
	if ast.OutputType() != cel.BoolType {
		return fail(fmt.Errorf("%s is %s, not bool", src, ast.OutputType()))
	}
	prg, err := env.Program(ast)
	if err != nil {
		return fail(err)
	}
	return &kubeCond{prg: prg, src: src, pos: ctx.Pos, root: root}, nil
}

type kubeCond struct {
	prg  cel.Program
	src  string
	pos  katalog.Pos
	root *structuralschema.Structural
}

func (c *kubeCond) Eval(s *engine.Scope) (bool, error) {
	var self any = s.Self
	if c.root != nil {
		self = s.Memo(c.root, func() any { return celschema.UnstructuredToVal(s.Self, c.root) })
	}
	out, _, err := c.prg.Eval(map[string]any{"self": self})
	if err != nil {
		return false, err
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("not a bool: %v", out)
	}
	return bool(b), nil
}

func (c *kubeCond) Source() string   { return c.src }
func (c *kubeCond) Pos() katalog.Pos { return c.pos }

// readObject reads a YAML object the way the operator sees it: JSON numbers
// as int64 when whole, float64 otherwise.
func readObject(t testing.TB, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decodeObject(t, string(data))
}

func decodeObject(t testing.TB, y string) map[string]any {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(j, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// schemaOf builds a structural schema from an OpenAPI v3 YAML document.
func schemaOf(t testing.TB, y string) *structuralschema.Structural {
	t.Helper()
	var props apiextensionsv1.JSONSchemaProps
	if err := yaml.Unmarshal([]byte(y), &props); err != nil {
		t.Fatal(err)
	}
	s, err := katalog.StructuralSchema(&props)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
