package gotmpl

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/orkspace/orkestra-cel/engine/notes"
)

// The function library of the legacy adapter: the functions of the original
// engine's note library that katalogs use, with their original semantics.
// Anything else is a load error.

// funcInfo describes one function a template may call.
type funcInfo struct {
	fn any // nil for text/template builtins
	// random functions make a new value on every evaluation.
	random bool
	// pipeFirst functions take the value they work on first: in the pipe
	// form `X | f A` the piped X lands in the last parameter instead, which
	// silently changes the meaning (`.spec.x | contains "prod"` asks whether
	// "prod" contains spec.x). The pipe form is a load error for them.
	pipeFirst bool
	// min and max argument counts of builtins (max < 0: no limit).
	min, max int
	// clock: the function reads the clock; it returns the timer of a call
	// from its arguments (nil: the value never changes).
	clock func(args []parse.Node) timer
}

var funcs = map[string]*funcInfo{
	// conditional
	"default":  {fn: fnDefault},
	"coalesce": {fn: fnCoalesce, pipeFirst: true},
	"ternary":  {fn: fnTernary, pipeFirst: true},
	"empty":    {fn: isEmpty},
	"notEmpty": {fn: fnNotEmpty},

	// strings
	"toLower":    {fn: strings.ToLower},
	"toUpper":    {fn: strings.ToUpper},
	"trimSpace":  {fn: strings.TrimSpace},
	"trim":       {fn: strings.Trim, pipeFirst: true},
	"trimPrefix": {fn: strings.TrimPrefix, pipeFirst: true},
	"trimSuffix": {fn: strings.TrimSuffix, pipeFirst: true},
	"hasPrefix":  {fn: strings.HasPrefix, pipeFirst: true},
	"hasSuffix":  {fn: strings.HasSuffix, pipeFirst: true},
	"contains":   {fn: strings.Contains, pipeFirst: true},
	"replace":    {fn: fnReplace, pipeFirst: true},
	"split":      {fn: fnSplit, pipeFirst: true},
	"join":       {fn: fnJoin, pipeFirst: true},
	"repeat":     {fn: fnRepeat, pipeFirst: true},
	"truncate":   {fn: fnTruncate, pipeFirst: true},

	// math
	"add":   {fn: fnAdd},
	"sub":   {fn: fnSub, pipeFirst: true},
	"mul":   {fn: fnMul},
	"div":   {fn: fnDiv, pipeFirst: true},
	"mod":   {fn: fnMod, pipeFirst: true},
	"min":   {fn: fnMin},
	"max":   {fn: fnMax},
	"abs":   {fn: fnAbs},
	"clamp": {fn: fnClamp, pipeFirst: true},

	// types
	"toString": {fn: fnToString},
	"toInt":    {fn: fnToInt},
	"toFloat":  {fn: fnToFloat},
	"toBool":   {fn: fnToBool},
	"toJson":   {fn: fnToJSON},
	"typeOf":   {fn: notes.TypeOf},
	"len":      {fn: fnLen},

	// safe access
	"get":         {fn: fnGet},
	"getOr":       {fn: fnGetOr, pipeFirst: true},
	"getStringOr": {fn: fnGetStringOr, pipeFirst: true},
	"getIntOr":    {fn: fnGetIntOr, pipeFirst: true},
	"getBoolOr":   {fn: fnGetBoolOr, pipeFirst: true},

	// random: only where ctx.AllowRandom (secret data with once: true)
	"randomHex":          {fn: fnRandomHex, random: true},
	"randomAlphanumeric": {fn: fnRandomAlphanumeric, random: true},
	"randomBase64":       {fn: fnRandomBase64, random: true},
	"uuidv4":             {fn: fnUUIDv4, random: true},

	// cron
	"cronToMap":     {fn: fnCronToMap},
	"cronFromMap":   {fn: fnCronFromMap},
	"cronFromAny":   {fn: notes.CronFromAny},
	"cronNormalize": {fn: notes.CronNormalize},
	"cronExpr":      {fn: notes.CronExpr, pipeFirst: true},

	// text/template builtins
	"and":      {min: 1, max: -1},
	"or":       {min: 1, max: -1},
	"not":      {min: 1, max: 1},
	"index":    {min: 1, max: -1},
	"slice":    {min: 1, max: -1},
	"print":    {fn: fmt.Sprint},
	"printf":   {fn: fnPrintf},
	"println":  {fn: fmt.Sprintln},
	"eq":       {min: 2, max: -1},
	"ne":       {min: 2, max: 2},
	"lt":       {min: 2, max: 2},
	"le":       {min: 2, max: 2},
	"gt":       {min: 2, max: 2},
	"ge":       {min: 2, max: 2},
	"html":     {min: 0, max: -1},
	"js":       {min: 0, max: -1},
	"urlquery": {min: 0, max: -1},
}

// funcMap is what templates execute with.
var funcMap = func() template.FuncMap {
	m := template.FuncMap{}
	for name, f := range funcs {
		if f.fn != nil {
			m[name] = f.fn
		}
	}
	return m
}()

// FuncNames returns the names of every function a legacy template may call,
// sorted.
func FuncNames() []string {
	names := make([]string, 0, len(funcs))
	for n := range funcs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ── conditional ─────────────────────────────────────────────────────────────

// isEmpty is the original engine's notion of empty: nil, "", "<no value>",
// false, numeric zero, an empty list or map — and anything whose %v is "".
func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	switch x := v.(type) {
	case string:
		return x == "" || x == "<no value>"
	case bool:
		return !x
	case int:
		return x == 0
	case int32:
		return x == 0
	case int64:
		return x == 0
	case float32:
		return x == 0
	case float64:
		return x == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return fmt.Sprintf("%v", v) == ""
}

func fnNotEmpty(v any) bool { return !isEmpty(v) }

// fnDefault takes (fallback, value); the parser puts `default VALUE FALLBACK`
// (value first) into this order.
func fnDefault(fallback, value any) any {
	if isEmpty(value) {
		return fallback
	}
	return value
}

func fnCoalesce(vals ...any) any {
	for _, v := range vals {
		if !isEmpty(v) {
			return v
		}
	}
	return nil
}

// fnTernary is the original engine's ternary: condition first (not Sprig's
// order), truthy by Go rules.
func fnTernary(cond, ifTrue, ifFalse any) any {
	if isTruthy(cond) {
		return ifTrue
	}
	return ifFalse
}

func isTruthy(v any) bool {
	if v == nil {
		return false
	}
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return x != ""
	case int:
		return x != 0
	case int8:
		return x != 0
	case int16:
		return x != 0
	case int32:
		return x != 0
	case int64:
		return x != 0
	case uint:
		return x != 0
	case uint8:
		return x != 0
	case uint16:
		return x != 0
	case uint32:
		return x != 0
	case uint64:
		return x != 0
	case float32:
		return x != 0
	case float64:
		return x != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// ── strings ─────────────────────────────────────────────────────────────────

func fnSplit(s, sep string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, sep)
}

// fnJoin joins a list: the []string that split returns, or a list field of
// the object (its items formatted with %v). The original took only []string,
// so joining a list field failed at run time.
func fnJoin(elems any, sep string) (string, error) {
	var parts []string
	switch x := elems.(type) {
	case []string:
		parts = x
	case []any:
		parts = make([]string, len(x))
		for i, e := range x {
			parts[i] = fnToString(e)
		}
	case nil:
		return "", nil
	default:
		return "", fmt.Errorf("join: expected a list, got %T", elems)
	}
	total := len(sep) * max(len(parts)-1, 0)
	for _, p := range parts {
		total += len(p)
	}
	if total > MaxOutputBytes {
		return "", fmt.Errorf("join: the result would be longer than %d bytes", MaxOutputBytes)
	}
	return strings.Join(parts, sep), nil
}

// Functions whose result can be much larger than their arguments check
// its size before building it: no string a template builds may exceed
// MaxOutputBytes, whatever the budget left.

func fnRepeat(s string, n int) (string, error) {
	if n < 0 {
		return "", fmt.Errorf("repeat: negative count %d", n)
	}
	if n > 0 && len(s) > MaxOutputBytes/n {
		return "", fmt.Errorf("repeat: the result would be longer than %d bytes", MaxOutputBytes)
	}
	return strings.Repeat(s, n), nil
}

func fnReplace(s, old, new string) (string, error) {
	n := strings.Count(s, old)
	if n > 0 && len(new) > len(old) && len(s)+n*(len(new)-len(old)) > MaxOutputBytes {
		return "", fmt.Errorf("replace: the result would be longer than %d bytes", MaxOutputBytes)
	}
	return strings.ReplaceAll(s, old, new), nil
}

// fnPrintf is fmt.Sprintf, refusing widths and precisions that would build
// a string longer than MaxOutputBytes from a few bytes of format.
func fnPrintf(format string, args ...any) (string, error) {
	if w := maxFormatWidth(format, args); w > MaxOutputBytes {
		return "", fmt.Errorf("printf: a width or precision of %d is larger than %d", w, MaxOutputBytes)
	}
	return fmt.Sprintf(format, args...), nil
}

// maxFormatWidth is the largest width or precision in a format, `*` ones
// read from args.
func maxFormatWidth(format string, args []any) int {
	out, argi := 0, 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		if i < len(format) && format[i] == '%' {
			continue
		}
		for i < len(format) && strings.IndexByte("+-# 0", format[i]) >= 0 {
			i++
		}
		for part := 0; part < 2; part++ {
			n := 0
			switch {
			case i < len(format) && format[i] == '*':
				if argi < len(args) {
					if v, ok := args[argi].(int); ok {
						n = v
					}
				}
				argi++
				i++
			default:
				for i < len(format) && format[i] >= '0' && format[i] <= '9' {
					n = min(n*10+int(format[i]-'0'), 1<<30)
					i++
				}
			}
			out = max(out, n)
			if part == 0 && i < len(format) && format[i] == '.' {
				i++
				continue
			}
			break
		}
		argi++
	}
	return out
}

// fnTruncate cuts s to at most n bytes, ending in "..." when it cut.
func fnTruncate(s string, n int) (string, error) {
	if n < 0 {
		return "", fmt.Errorf("truncate: negative length %d", n)
	}
	if len(s) <= n {
		return s, nil
	}
	if n <= 3 {
		return s[:n], nil
	}
	return s[:n-3] + "...", nil
}

// ── math ────────────────────────────────────────────────────────────────────

// toFloat converts the numeric-ish values the original accepted: booleans
// (0/1), integers, floats and numeric strings (strconv.ParseFloat).
func toFloat(v any) (float64, error) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case int:
		return float64(x), nil
	case int32:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case float32:
		return float64(x), nil
	case float64:
		return x, nil
	case string:
		return strconv.ParseFloat(x, 64)
	}
	return 0, fmt.Errorf("cannot convert %T to number", v)
}

// number returns an int64 when f is whole, else f.
func number(f float64) any {
	if f == float64(int64(f)) {
		return int64(f)
	}
	return f
}

func twoNumbers(name string, a, b any) (float64, float64, error) {
	af, ae := toFloat(a)
	bf, be := toFloat(b)
	if ae != nil || be != nil {
		return 0, 0, fmt.Errorf("%s: non-numeric arguments %v, %v", name, printable(a), printable(b))
	}
	return af, bf, nil
}

func printable(v any) any {
	if v == nil {
		return "<missing>"
	}
	return v
}

func fnAdd(a, b any) (any, error) {
	x, y, err := twoNumbers("add", a, b)
	if err != nil {
		return nil, err
	}
	return number(x + y), nil
}

func fnSub(a, b any) (any, error) {
	x, y, err := twoNumbers("sub", a, b)
	if err != nil {
		return nil, err
	}
	return number(x - y), nil
}

func fnMul(a, b any) (any, error) {
	x, y, err := twoNumbers("mul", a, b)
	if err != nil {
		return nil, err
	}
	return number(x * y), nil
}

func fnDiv(a, b any) (any, error) {
	x, y, err := twoNumbers("div", a, b)
	if err != nil {
		return nil, err
	}
	if y == 0 {
		return nil, errors.New("div: division by zero")
	}
	return number(x / y), nil
}

// fnMod is integer remainder: both sides are truncated to integers.
func fnMod(a, b any) (any, error) {
	x, y, err := twoNumbers("mod", a, b)
	if err != nil {
		return nil, err
	}
	if int64(y) == 0 {
		return nil, errors.New("mod: division by zero")
	}
	return int64(x) % int64(y), nil
}

func fnMin(a, b any) (any, error) {
	x, y, err := twoNumbers("min", a, b)
	if err != nil {
		return nil, err
	}
	if x < y {
		return number(x), nil
	}
	return number(y), nil
}

func fnMax(a, b any) (any, error) {
	x, y, err := twoNumbers("max", a, b)
	if err != nil {
		return nil, err
	}
	if x > y {
		return number(x), nil
	}
	return number(y), nil
}

func fnAbs(a any) (any, error) {
	x, err := toFloat(a)
	if err != nil {
		return nil, fmt.Errorf("abs: non-numeric argument %v", printable(a))
	}
	if x < 0 {
		x = -x
	}
	return number(x), nil
}

func fnClamp(v, lo, hi any) (any, error) {
	x, e1 := toFloat(v)
	l, e2 := toFloat(lo)
	h, e3 := toFloat(hi)
	if e1 != nil || e2 != nil || e3 != nil {
		return nil, fmt.Errorf("clamp: non-numeric arguments %v, %v, %v", printable(v), printable(lo), printable(hi))
	}
	switch {
	case x < l:
		return number(l), nil
	case x > h:
		return number(h), nil
	}
	return number(x), nil
}

// ── types ───────────────────────────────────────────────────────────────────

func fnToString(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%v", v)
}

// fnToInt truncates: "3.7" and 3.7 give 3, true gives 1.
func fnToInt(v any) (int64, error) {
	if b, ok := v.(bool); ok {
		if b {
			return 1, nil
		}
		return 0, nil
	}
	f, err := toFloat(v)
	if err != nil {
		return 0, fmt.Errorf("toInt: %w", err)
	}
	return int64(f), nil
}

func fnToFloat(v any) (float64, error) {
	f, err := toFloat(v)
	if err != nil {
		return 0, fmt.Errorf("toFloat: %w", err)
	}
	return f, nil
}

// fnToBool accepts booleans, numbers (non-zero is true) and the strings
// true/True/TRUE/1/yes/YES/Yes/on/ON and false/False/FALSE/0/no/NO/No/off/OFF/"".
func fnToBool(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case int, int32, int64, float32, float64:
		f, _ := toFloat(v)
		return f != 0, nil
	case string:
		switch x {
		case "true", "True", "TRUE", "1", "yes", "YES", "Yes", "on", "ON":
			return true, nil
		case "false", "False", "FALSE", "0", "no", "NO", "No", "off", "OFF", "":
			return false, nil
		}
		return false, fmt.Errorf("toBool: unrecognised value %q", x)
	}
	return false, fmt.Errorf("toBool: cannot convert %T", v)
}

func fnToJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("toJson: %w", err)
	}
	return string(b), nil
}

// fnLen replaces the builtin len: 0 for a missing value instead of an error,
// the length of a string (bytes), list or map, and 0 for anything else.
func fnLen(v any) int {
	switch x := v.(type) {
	case nil:
		return 0
	case string:
		return len(x)
	case []any:
		return len(x)
	case map[string]any:
		return len(x)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.String:
		return rv.Len()
	}
	return 0
}

// ── safe access ─────────────────────────────────────────────────────────────

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

// ── random ──────────────────────────────────────────────────────────────────

// ── cron ────────────────────────────────────────────────────────────────────
