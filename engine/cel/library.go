package cel

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// RandomFunctions are the functions of the orkestra library that yield a new
// value on every call. They are allowed only where Context.AllowRandom is
// set (the data of a `once: true` secret).
var RandomFunctions = []string{"randomHex", "randomAlphanumeric", "randomBase64", "uuid"}

// maxRandomLength bounds n in randomHex(n) and friends.
const maxRandomLength = 4096

// maxCronField bounds one field of a cron schedule in cronFromMap.
const maxCronField = 128

var cronKeys = []string{"minute", "hour", "dayOfMonth", "month", "dayOfWeek"}

var cronMacros = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// orkestraLib is the `orkestra` CEL library:
//
//	randomHex(int) string           n random bytes as 2n hex characters
//	randomAlphanumeric(int) string  n random characters from [A-Za-z0-9]
//	randomBase64(int) string        n random bytes, standard base64
//	uuid() string                   a random (version 4) UUID
//	cronToMap(string) map(string, string)
//	cronFromMap(map(string, dyn)) string
type orkestraLib struct{}

func (orkestraLib) LibraryName() string { return "orkestra" }

func (orkestraLib) CompileOptions() []cel.EnvOption { return orkestraDefs().CompileOptions() }

func (orkestraLib) ProgramOptions() []cel.ProgramOption { return orkestraDefs().ProgramOptions() }

func orkestraDefs() Overloads {
	random := func(name string, factor float64, gen func(n int) (string, error)) Overload {
		return Overload{Function: name, ID: name + "_int", Args: []*cel.Type{cel.IntType}, Result: cel.StringType,
			Binding: cel.UnaryBinding(func(arg ref.Val) ref.Val {
				n, ok := arg.(types.Int)
				if !ok {
					return types.MaybeNoSuchOverloadErr(arg)
				}
				if n < 0 || n > maxRandomLength {
					return types.NewErr("%s(%d): n must be between 0 and %d", name, int64(n), maxRandomLength)
				}
				s, err := gen(int(n))
				if err != nil {
					return types.NewErr("%s: %v", name, err)
				}
				return types.String(s)
			}),
			Estimate: randomCostEstimate(factor), Track: stringCost(resultOnly)}
	}
	return Overloads{
		random("randomHex", 2, randomHex),
		random("randomAlphanumeric", 1, randomAlphanumeric),
		random("randomBase64", 4.0/3, randomBase64),
		{Function: "uuid", ID: "uuid", Result: cel.StringType,
			Binding: cel.FunctionBinding(func(...ref.Val) ref.Val {
				s, err := uuidV4()
				if err != nil {
					return types.NewErr("uuid: %v", err)
				}
				return types.String(s)
			}),
			Estimate: func(checker.CostEstimator, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
				size := checker.FixedSizeEstimate(36)
				return &checker.CallEstimate{CostEstimate: checker.FixedCostEstimate(1 + 4), ResultSize: &size}
			},
			Track: stringCost(resultOnly)},
		{Function: "cronToMap", ID: "cronToMap_string", Args: []*cel.Type{cel.StringType}, Result: cel.MapType(cel.StringType, cel.StringType),
			Binding: cel.UnaryBinding(func(arg ref.Val) ref.Val {
				s, ok := arg.(types.String)
				if !ok {
					return types.MaybeNoSuchOverloadErr(arg)
				}
				m, err := cronToMap(string(s))
				if err != nil {
					return types.NewErr("%v", err)
				}
				return types.DefaultTypeAdapter.NativeToValue(m)
			}),
			Estimate: func(est checker.CostEstimator, _ *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
				in := sizeOf(est, args[0])
				// One traversal of the input, plus building a map of five entries.
				cost := in.MultiplyByCostFactor(common.StringTraversalCostFactor).Add(checker.FixedCostEstimate(common.MapCreateBaseCost + 5))
				size := checker.FixedSizeEstimate(5)
				return &checker.CallEstimate{CostEstimate: cost, ResultSize: &size}
			},
			Track: func(args []ref.Val, result ref.Val) *uint64 {
				c := uint64(common.MapCreateBaseCost+5) + *stringCost(firstArg)(args, result) - 1
				return &c
			}},
		{Function: "cronFromMap", ID: "cronFromMap_map", Args: []*cel.Type{cel.MapType(cel.StringType, cel.DynType)}, Result: cel.StringType,
			Binding: cel.UnaryBinding(func(arg ref.Val) ref.Val {
				m, ok := arg.(traits.Mapper)
				if !ok {
					return types.MaybeNoSuchOverloadErr(arg)
				}
				s, err := cronFromMap(m)
				if err != nil {
					return types.NewErr("%v", err)
				}
				return types.String(s)
			}),
			Estimate: func(checker.CostEstimator, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
				// At most five fields of at most maxCronField characters.
				maxLen := uint64(5*maxCronField + 4)
				size := checker.SizeEstimate{Min: 9, Max: maxLen}
				cost := size.MultiplyByCostFactor(common.StringTraversalCostFactor).Add(checker.FixedCostEstimate(5))
				return &checker.CallEstimate{CostEstimate: cost, ResultSize: &size}
			},
			Track: stringCost(resultOnly)},
	}
}

// randomCostEstimate: the result is n*factor characters; n is exact when it
// is a constant, else at most maxRandomLength.
func randomCostEstimate(factor float64) checker.FunctionEstimator {
	return func(_ checker.CostEstimator, _ *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
		maxN := uint64(maxRandomLength)
		minN := uint64(0)
		if len(args) == 1 && args[0].Expr().Kind() == ast.LiteralKind {
			if n, ok := args[0].Expr().AsLiteral().(types.Int); ok && n >= 0 && n <= maxRandomLength {
				maxN, minN = uint64(n), uint64(n)
			}
		}
		size := checker.SizeEstimate{Min: uint64(math.Ceil(float64(minN) * factor)), Max: uint64(math.Ceil(float64(maxN) * factor))}
		cost := size.MultiplyByCostFactor(common.StringTraversalCostFactor).Add(checker.FixedCostEstimate(1))
		return &checker.CallEstimate{CostEstimate: cost, ResultSize: &size}
	}
}

func sizeOf(est checker.CostEstimator, n checker.AstNode) checker.SizeEstimate {
	if s := n.ComputedSize(); s != nil {
		return *s
	}
	if s := est.EstimateSize(n); s != nil {
		return *s
	}
	return checker.SizeEstimate{Min: 0, Max: math.MaxUint64}
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func randomBase64(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

const alphanumeric = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

func randomAlphanumeric(n int) (string, error) {
	b := make([]byte, n)
	max := big.NewInt(int64(len(alphanumeric)))
	for i := range b {
		k, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", err
		}
		b[i] = alphanumeric[k.Int64()]
	}
	return string(b), nil
}

func uuidV4() (string, error) {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		return "", err
	}
	u[6] = (u[6] & 0x0f) | 0x40 // version 4
	u[8] = (u[8] & 0x3f) | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16]), nil
}

// cronToMap splits a five-field cron schedule (or a macro such as @daily)
// into its fields.
func cronToMap(s string) (map[string]string, error) {
	src := strings.TrimSpace(s)
	if strings.HasPrefix(src, "@") {
		exp, ok := cronMacros[strings.ToLower(src)]
		if !ok {
			return nil, fmt.Errorf("cronToMap(%q): unknown macro %s; use @hourly, @daily, @midnight, @weekly, @monthly, @yearly or @annually", s, src)
		}
		src = exp
	}
	fields := strings.Fields(src)
	if len(fields) != 5 {
		return nil, fmt.Errorf("cronToMap(%q): a schedule has 5 fields (minute hour dayOfMonth month dayOfWeek), got %d", s, len(fields))
	}
	out := make(map[string]string, 5)
	for i, f := range fields {
		if err := checkCronField(f); err != nil {
			return nil, fmt.Errorf("cronToMap(%q): %s field %q: %w", s, cronKeys[i], f, err)
		}
		out[cronKeys[i]] = f
	}
	return out, nil
}

func checkCronField(f string) error {
	for _, c := range f {
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case strings.ContainsRune("*,-/?#", c):
		default:
			return fmt.Errorf("unexpected character %q", c)
		}
	}
	return nil
}

// cronFromMap joins the fields of a schedule; missing fields are "*".
func cronFromMap(m traits.Mapper) (string, error) {
	fields := map[string]string{}
	var unknown []string
	for it := m.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		ks, ok := k.(types.String)
		if !ok {
			return "", fmt.Errorf("cronFromMap: key %v is not a string", k)
		}
		key := string(ks)
		known := false
		for _, ck := range cronKeys {
			if ck == key {
				known = true
			}
		}
		if !known {
			unknown = append(unknown, key)
			continue
		}
		var s string
		switch v := m.Get(k).(type) {
		case types.String:
			s = strings.TrimSpace(string(v))
		case types.Int:
			s = fmt.Sprint(int64(v))
		case types.Uint:
			s = fmt.Sprint(uint64(v))
		default:
			return "", fmt.Errorf("cronFromMap: %s must be a string or an integer, got %s", key, v.Type().TypeName())
		}
		if s == "" {
			s = "*"
		}
		if len(s) > maxCronField {
			return "", fmt.Errorf("cronFromMap: %s is longer than %d characters", key, maxCronField)
		}
		if strings.ContainsAny(s, " \t\n") {
			return "", fmt.Errorf("cronFromMap: %s %q contains whitespace", key, s)
		}
		if err := checkCronField(s); err != nil {
			return "", fmt.Errorf("cronFromMap: %s %q: %w", key, s, err)
		}
		fields[key] = s
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return "", fmt.Errorf("cronFromMap: unknown key %s; the keys are minute, hour, dayOfMonth, month, dayOfWeek", strings.Join(unknown, ", "))
	}
	parts := make([]string, 5)
	for i, k := range cronKeys {
		if v, ok := fields[k]; ok {
			parts[i] = v
		} else {
			parts[i] = "*"
		}
	}
	return strings.Join(parts, " "), nil
}
