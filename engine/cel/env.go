// Package cel is Orkestra's CEL backend: Kubernetes' own CEL environment
// pinned at one compatibility version, `self` typed from the CRD version's
// structural schema with full ObjectMeta, the `${…}` template lexer, output
// type checks against the schema where a value lands, static cost estimation
// with the API server's estimator, and evaluation on unstructured objects
// through a lazy value adapter.
//
// Everything is compiled at load: CompileValue and CompileCondition return
// programs that evaluate many times, concurrently, without compiling or
// building an environment.
package cel

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/version"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/orkspace/orkestra-cel/engine"
)

// CompatibilityVersion is the Kubernetes version whose CEL environment
// (language options, libraries, cost rules) expressions compile against. It
// is pinned: the same katalog means the same thing whatever Kubernetes
// libraries the binary was built with.
const CompatibilityVersion = "1.37"

var compatibilityVersion = version.MajorMinor(1, 37)

const (
	// DefaultCostLimit is the static estimated cost limit of one expression:
	// the API server's limit for one CRD validation rule (apiextensions
	// validation.StaticEstimatedCostLimit, 1e7).
	DefaultCostLimit uint64 = 10_000_000
	// DefaultRuntimeCostLimit is the runtime cost limit of one evaluation:
	// the API server's per-call limit (celconfig.PerCallLimit, 1e6, about
	// 0.1 s of CPU).
	DefaultRuntimeCostLimit uint64 = celconfig.PerCallLimit
)

// Options configure a Backend.
type Options struct {
	// CostLimit is the static estimated cost limit per expression; 0 means
	// DefaultCostLimit. Context.CostLimit overrides it.
	CostLimit uint64
	// RuntimeCostLimit is the cost limit of one evaluation; 0 means
	// DefaultRuntimeCostLimit.
	RuntimeCostLimit uint64
	// Libraries are extra CEL libraries (the legacy adapter adds helper
	// functions for structured conditions).
	Libraries []cel.EnvOption
}

// Backend compiles CEL string values and conditions. It is safe for
// concurrent use.
type Backend struct {
	envSet       *environment.EnvSet
	costLimit    uint64
	runtimeLimit uint64
	// noFastPath makes plain references run their program (tests prove both
	// paths agree).
	noFastPath bool

	mu      sync.Mutex
	schemas map[envKey]*schemaEnvEntry

	extraOnce sync.Once
	extra     []string
}

// envKey identifies an environment: the schema of self and the variables
// besides it (names and schema pointers).
type envKey struct {
	self *structuralschema.Structural
	vars string
}

func keyOf(self *structuralschema.Structural, vars []engine.Var) envKey {
	k := envKey{self: self}
	for _, v := range vars {
		k.vars += fmt.Sprintf("%s=%p;", v.Name, v.Schema)
	}
	return k
}

var _ engine.Backend = (*Backend)(nil)

type schemaEnvEntry struct {
	once sync.Once
	env  *schemaEnv
	err  error
}

// schemaEnv is the environment of one `self` schema.
type schemaEnv struct {
	env  *cel.Env
	tree *schemaTree
	est  *sizeEstimator
	// programs holds the program of every source compiled against env: a
	// cel.Program carries its own table of every function overload of the
	// environment (about 14 KB), so the same expression in many places, as
	// in entries stamped from one pattern, shares one. Programs are safe for
	// concurrent evaluation.
	mu       sync.Mutex
	programs map[string]cel.Program
	// vars are the variables besides self, by name.
	vars map[string]*schemaTree
}

// program returns the program of the checked source src, built once.
func (se *schemaEnv) program(src string, checked *cel.Ast, opts ...cel.ProgramOption) (cel.Program, error) {
	se.mu.Lock()
	defer se.mu.Unlock()
	if p, ok := se.programs[src]; ok {
		return p, nil
	}
	p, err := se.env.Program(checked, opts...)
	if err != nil {
		return nil, err
	}
	if se.programs == nil {
		se.programs = map[string]cel.Program{}
	}
	se.programs[src] = p
	return p, nil
}

// baseEnvSet is Kubernetes' base environment at CompatibilityVersion with the
// orkestra library and backtick identifiers, built once per process.
var baseEnvSet = sync.OnceValues(func() (*environment.EnvSet, error) {
	return envSetAt(compatibilityVersion)
})

// envSetAt is the environment at a compatibility version: Kubernetes' base
// environment, the orkestra library, and Orkestra's conversion additions
// from 1.37 on (absent where the pinned version is older).
func envSetAt(v *version.Version) (*environment.EnvSet, error) {
	return environment.MustBaseEnvSet(v).Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions: []cel.EnvOption{
			cel.Lib(orkestraLib{}),
			cel.Lib(clockLib{}),
			cel.EnableIdentifierEscapeSyntax(),
		},
	}, environment.VersionedOptions{
		IntroducedVersion: conversionLibrariesVersion,
		EnvOptions:        conversionLibraries(),
	})
}

// New returns a Backend. The base environment is built once; each `self`
// schema extends it once, on first use.
func New(opts Options) (*Backend, error) {
	set, err := baseEnvSet()
	if err != nil {
		return nil, err
	}
	if len(opts.Libraries) > 0 {
		set, err = set.Extend(environment.VersionedOptions{
			IntroducedVersion: version.MajorMinor(1, 0),
			EnvOptions:        opts.Libraries,
		})
		if err != nil {
			return nil, err
		}
	}
	b := &Backend{
		envSet:       set,
		costLimit:    opts.CostLimit,
		runtimeLimit: opts.RuntimeCostLimit,
		schemas:      map[envKey]*schemaEnvEntry{},
	}
	if b.costLimit == 0 {
		b.costLimit = DefaultCostLimit
	}
	if b.runtimeLimit == 0 {
		b.runtimeLimit = DefaultRuntimeCostLimit
	}
	return b, nil
}

// schemaEnv returns the environment of schema s and variables vars,
// building it on first use (one per schema pointer and variables, however
// many expressions compile against it).
func (b *Backend) schemaEnv(s *structuralschema.Structural, vars []engine.Var) (*schemaEnv, error) {
	key := keyOf(s, vars)
	b.mu.Lock()
	e, ok := b.schemas[key]
	if !ok {
		e = &schemaEnvEntry{}
		b.schemas[key] = e
	}
	b.mu.Unlock()
	e.once.Do(func() {
		tree := buildSchemaTree(s)
		opts := []cel.EnvOption{cel.Variable("self", tree.root.decl.CelType())}
		decls := []*apiservercel.DeclType{tree.root.decl}
		trees := map[string]*schemaTree{}
		for _, v := range vars {
			vt := buildVarTree(v.Name, v.Schema)
			trees[v.Name] = vt
			opts = append(opts, cel.Variable(v.Name, vt.root.decl.CelType()))
			if vt.root.kind == kObject {
				decls = append(decls, vt.root.decl)
			}
		}
		set, err := b.envSet.Extend(environment.VersionedOptions{
			IntroducedVersion: version.MajorMinor(1, 0),
			EnvOptions:        opts,
			DeclTypes:         decls,
		})
		if err != nil {
			e.err = err
			return
		}
		e.env = &schemaEnv{env: set.NewExpressionsEnv(), tree: tree, est: &sizeEstimator{root: tree.root, vars: trees}, vars: trees}
	})
	return e.env, e.err
}

// envCount reports how many schema environments were built (for tests).
func (b *Backend) envCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.schemas)
}
