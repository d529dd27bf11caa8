package gotmpl

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// How a rendered string becomes a value. The mode is chosen once at load
// from the context (engine.Coerce and the expected type).
type coerceMode int

const (
	modeString coerceMode = iota
	modeInteger
	modeNumber
	modeBoolean
	modeObject
	modeArray
	modeIntOrString
	modeGuess
	modeAuto // a status field's type: auto: int, float, bool, else the string
)

// modeNames name the modes in legacy.value's CEL calls.
var modeNames = map[coerceMode]string{
	modeString: "string", modeInteger: "integer", modeNumber: "number", modeBoolean: "boolean",
	modeObject: "object", modeArray: "array", modeIntOrString: "int-or-string", modeGuess: "guess", modeAuto: "auto",
}

// name names the coercion in legacy.value's CEL calls: the mode, and
// "+null" when an empty rendering is null.
func (c coercion) name() string {
	if c.emptyNull {
		return modeNames[c.mode] + "+null"
	}
	return modeNames[c.mode]
}

// coercionNamed is the coercion of a name (false: none).
func coercionNamed(name string) (coercion, bool) {
	base, emptyNull := strings.CutSuffix(name, "+null")
	for m, n := range modeNames {
		if n == base {
			return coercion{mode: m, emptyNull: emptyNull}, true
		}
	}
	return coercion{}, false
}

type coercion struct {
	mode coerceMode
	// emptyNull: an empty rendering is null (CoerceGuess, as the original
	// did); otherwise an empty rendering into a non-string typed target
	// leaves the field unset (engine.ErrAbsent).
	emptyNull bool
	// nullUnset: the null lands in a field the target's schema declares
	// non-nullable, which the API server prunes: null is the field left
	// unset (see NullLeavesUnset).
	nullUnset bool
}

// NullLeavesUnset reports that a null written at ctx reaches storage as the
// field left unset: a conversion output into a declared, non-nullable
// field (the API server prunes such nulls from converted objects).
func NullLeavesUnset(ctx *engine.Context) bool {
	return ctx.Coerce == engine.CoerceGuess && strings.HasPrefix(ctx.Field, "conversion.") && ctx.Expected != nil && !ctx.Expected.Nullable
}

// coercionFor picks the coercion for a target. A target whose schema gives
// a type is parsed as that type, whatever ctx.Coerce says: guessing existed
// in the original engine only so that numbers and booleans reached typed
// fields as numbers and booleans.
func coercionFor(ctx *engine.Context) coercion {
	c := coercion{emptyNull: ctx.Coerce == engine.CoerceGuess, nullUnset: NullLeavesUnset(ctx)}
	s := ctx.Expected
	switch {
	case s == nil && ctx.Coerce == engine.CoerceAuto:
		c.mode = modeAuto
	case s == nil:
		if ctx.Coerce == engine.CoerceGuess {
			c.mode = modeGuess
		} else {
			c.mode = modeString
		}
	case s.XIntOrString:
		c.mode = modeIntOrString
	case s.Type == "string":
		c.mode = modeString
	case s.Type == "integer":
		c.mode = modeInteger
	case s.Type == "number":
		c.mode = modeNumber
	case s.Type == "boolean":
		c.mode = modeBoolean
	case s.Type == "object":
		c.mode = modeObject
	case s.Type == "array":
		c.mode = modeArray
	default: // x-kubernetes-preserve-unknown-fields without a type
		c.mode = modeGuess
	}
	return c
}

func describeMode(m coerceMode) string {
	switch m {
	case modeString:
		return "a string"
	case modeInteger:
		return "an integer"
	case modeNumber:
		return "a number"
	case modeBoolean:
		return "a boolean"
	case modeObject:
		return "an object"
	case modeArray:
		return "a list"
	case modeIntOrString:
		return "an integer or a string"
	}
	return "anything"
}

// coerce turns a rendered template (already trimmed, `<no value>` removed)
// into a value.
func (c coercion) coerce(out string) (any, error) {
	if strings.HasPrefix(out, cronMapSentinel) {
		return decodeJSON(strings.TrimPrefix(out, cronMapSentinel))
	}
	switch c.mode {
	case modeGuess:
		return guess(out), nil
	case modeAuto:
		return auto(out), nil
	}
	s := out
	if c.mode != modeString {
		s = strings.TrimSpace(out)
	}
	if s == "" {
		switch {
		case c.emptyNull:
			return nil, nil
		case c.mode == modeString:
			return "", nil
		}
		return nil, engine.ErrAbsent
	}
	switch c.mode {
	case modeString:
		return s, nil
	case modeInteger:
		return parseInteger(s)
	case modeNumber:
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("rendered %q, which is not a number", s)
		}
		return f, nil
	case modeBoolean:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("rendered %q, which is not a boolean (true, false, 1, 0, t, f, TRUE, FALSE, True, False)", s)
		}
		return b, nil
	case modeIntOrString:
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
		return s, nil
	case modeObject, modeArray:
		v, err := decodeJSON(s)
		if err != nil {
			return nil, fmt.Errorf("rendered %q, which is not %s in JSON (render it with toJson)", shorten(s), describeMode(c.mode))
		}
		if _, ok := v.(map[string]any); c.mode == modeObject && !ok {
			return nil, fmt.Errorf("rendered %q, which is not a JSON object", shorten(s))
		}
		if _, ok := v.([]any); c.mode == modeArray && !ok {
			return nil, fmt.Errorf("rendered %q, which is not a JSON list", shorten(s))
		}
		return v, nil
	}
	return s, nil
}

// parseInteger parses a rendered integer: strconv.ParseInt after trimming,
// and, for values that a float64 field renders (1e+06, 3.0), a float that
// is a whole number.
func parseInteger(s string) (any, error) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if i, ok := jsonval.Int(f); ok {
			return i, nil
		}
	}
	return nil, fmt.Errorf("rendered %q, which is not an integer", s)
}

// guess is the original engine's TryCoerceString for untyped targets:
// integer, then float, then boolean (strconv.ParseBool: "t", "F", "TRUE"…),
// then a JSON object or list, else the string; empty is null. NaN and
// infinities stay strings (JSON cannot hold them; the original failed).
func guess(s string) any {
	if s == "" {
		return nil
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return f
	}
	if b, err := strconv.ParseBool(s); err == nil {
		return b
	}
	if t := strings.TrimSpace(s); t != "" && (t[0] == '{' || t[0] == '[') {
		if v, err := decodeJSON(t); err == nil {
			return v
		}
	}
	return s
}

// auto is the original's status `type: auto`: integer, then float, then
// strconv.ParseBool, else the string as rendered (empty stays ""). NaN and
// infinities stay strings: JSON cannot hold them.
func auto(s string) any {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return f
	}
	if b, err := strconv.ParseBool(s); err == nil {
		return b
	}
	return s
}

// decodeJSON decodes JSON into plain values as the API server does: whole
// numbers int64, others float64; trailing data is an error.
func decodeJSON(s string) (any, error) {
	var v any
	if err := utiljson.Unmarshal([]byte(s), &v); err != nil {
		return nil, err
	}
	return v, nil
}

func shorten(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// finish turns raw template output into the rendered string: trimmed, then
// every "<no value>" (a missing key) removed — in that order, as the
// original did, so "{{ .spec.missing }} x" renders " x".
func finish(raw string) string {
	return strings.ReplaceAll(strings.TrimSpace(raw), "<no value>", "")
}
