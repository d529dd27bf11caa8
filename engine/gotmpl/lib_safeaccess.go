package gotmpl

import "github.com/google/cel-go/cel"

// The safe access functions (upstream pkg/note/docs/08-safe-access.md).

var safeAccessFamily = family{name: "safe access", functions: []*function{
	{name: "get", fn: fnGet, translate: trGet, doc: "`get OBJ \"a\" \"b\"` (nil if any step is missing)"},
	{name: "getOr", fn: fnGetOr, pipeFirst: true, pipeHint: valueFirstHint, translate: trGetOr, doc: "`getOr VALUE FALLBACK`"},
	{name: "getStringOr", fn: fnGetStringOr, pipeFirst: true, pipeHint: valueFirstHint, doc: "`getStringOr`", celDecl: anyFunction("getStringOr", fnGetStringOr, cel.StringType, cel.DynType, cel.StringType),
		noCEL: "the Go type of the value decides, which a typed field settles at load; write default, or call getStringOr(v, fallback) in CEL"},
	{name: "getIntOr", fn: fnGetIntOr, pipeFirst: true, pipeHint: valueFirstHint, doc: "`getIntOr`", celDecl: anyFunction("getIntOr", fnGetIntOr, cel.IntType, cel.DynType, cel.IntType),
		noCEL: "the Go type of the value decides (int, int64, or float64 truncated), which a typed field settles at load; write default, or call getIntOr(v, fallback) in CEL"},
	{name: "getBoolOr", fn: fnGetBoolOr, pipeFirst: true, pipeHint: valueFirstHint, doc: "`getBoolOr`", celDecl: anyFunction("getBoolOr", fnGetBoolOr, cel.BoolType, cel.DynType, cel.BoolType),
		noCEL: "the Go type of the value decides, which a typed field settles at load; write boolDefault, or call getBoolOr(v, fallback) in CEL"},
}}

// fnGet walks maps by key; nil when any step is missing or not a map.
func fnGet(obj any, path ...string) any {
	cur := obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
		if cur == nil {
			return nil
		}
	}
	return cur
}

// fnGetOr is default with the value first: getOr VALUE FALLBACK.
func fnGetOr(value, fallback any) any {
	if isEmpty(value) {
		return fallback
	}
	return value
}

func fnGetStringOr(v any, fallback string) string {
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	return fallback
}

func fnGetIntOr(v any, fallback int) int {
	switch x := v.(type) {
	case int:
		return x
	case int64:
		return int(x)
	case float64:
		return int(x)
	}
	return fallback
}

func fnGetBoolOr(v any, fallback bool) bool {
	if b, ok := v.(bool); ok {
		return b
	}
	return fallback
}

// ── translations ────────────────────────────────────────────────────────────

// trGet walks the raw key nodes, nil-safe at every step.
func trGet(t *translator, x *call) val {
	t.arity(x, 1, -1)
	return t.index(x.args[0], x.nodes[1:], x.node(0), true)
}

func trGetOr(t *translator, x *call) val {
	t.arity(x, 2, 2)
	return t.dflt(x.args[1], x.args[0], x.node(1), x.node(0))
}
