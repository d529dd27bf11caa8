package objgen

import (
	"encoding/base64"
	"fmt"
	"math"
	"regexp/syntax"
	"strings"
	"time"
	"unicode/utf8"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/kube-openapi/pkg/validation/validate"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// maxSafe bounds generated numbers where the schema does not: integral values
// up to 2^53 stay exact as float64 (CEL, JSON consumers in other languages).
const maxSafe = 1 << 53

// integerBounds returns the inclusive integer range the schema allows and
// whether each end is set by the schema.
func integerBounds(s *structuralschema.Structural) (lo, hi int64, hasLo, hasHi bool) {
	lo, hi = -maxSafe, maxSafe
	vv := s.ValueValidation
	if vv != nil && vv.Minimum != nil {
		m := *vv.Minimum
		l := math.Ceil(m)
		if vv.ExclusiveMinimum && l == m {
			l++
		}
		lo, hasLo = clampInt(l), true
	}
	if vv != nil && vv.Maximum != nil {
		m := *vv.Maximum
		h := math.Floor(m)
		if vv.ExclusiveMaximum && h == m {
			h--
		}
		hi, hasHi = clampInt(h), true
	}
	if vv != nil && vv.Format == "int32" {
		lo, hi = max(lo, math.MinInt32), min(hi, math.MaxInt32)
	}
	return lo, hi, hasLo, hasHi
}

func clampInt(f float64) int64 {
	return int64(math.Max(-maxSafe, math.Min(maxSafe, f)))
}

// window narrows an unbounded side of [lo, hi] to a range of width w around
// the bounded side (or around 0 when both are open).
func window(lo, hi int64, hasLo, hasHi bool, below, above int64) (int64, int64) {
	switch {
	case !hasLo && !hasHi:
		return max(lo, -below), min(hi, above)
	case hasLo && !hasHi:
		return lo, min(hi, lo+above+below)
	case !hasLo && hasHi:
		return max(lo, hi-above-below), hi
	}
	return lo, hi
}

// integerStep returns the smallest positive integer that is a multiple of m.
func integerStep(m float64) (int64, bool) {
	for j := 1.0; j <= 1000; j++ {
		if p := j * m; p == math.Trunc(p) && p >= 1 && p <= maxSafe {
			return int64(p), true
		}
	}
	return 0, false
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

// unrepresentableBound reports a minimum, maximum or multipleOf the API
// server's validator (kube-openapi) cannot compare a value of the field's type
// and format with: it then rejects every value, e.g. an integer field with
// minimum 1.5 or multipleOf 2.5, or an int32 field with maximum 1e10.
func unrepresentableBound(s *structuralschema.Structural, typeName string) error {
	vv := s.ValueValidation
	if vv == nil {
		return nil
	}
	for _, b := range []struct {
		name string
		v    *float64
	}{{"minimum", vv.Minimum}, {"maximum", vv.Maximum}, {"multipleOf", vv.MultipleOf}} {
		if b.v == nil {
			continue
		}
		if err := validate.IsValueValidAgainstRange(*b.v, typeName, vv.Format, b.name, ""); err != nil {
			return fmt.Errorf("the API server rejects every value: %s %v does not fit a %s of format %q", b.name, *b.v, typeName, vv.Format)
		}
	}
	return nil
}

func (g *generator) integer(s *structuralschema.Structural, l loc) (int64, error) {
	if err := unrepresentableBound(s, "integer"); err != nil {
		return 0, fmt.Errorf("%s: %w", l, err)
	}
	lo, hi, hasLo, hasHi := integerBounds(s)
	if lo > hi {
		return 0, fmt.Errorf("%s: no integer lies within minimum and maximum", l)
	}
	wlo, whi := window(lo, hi, hasLo, hasHi, 10, 100)
	vv := s.ValueValidation
	if vv != nil && vv.MultipleOf != nil {
		step, ok := integerStep(*vv.MultipleOf)
		if !ok {
			return 0, fmt.Errorf("%s: no integer is a multiple of %v", l, *vv.MultipleOf)
		}
		klo, khi := ceilDiv(wlo, step), floorDiv(whi, step)
		if klo > khi {
			klo, khi = ceilDiv(lo, step), floorDiv(hi, step)
			if klo > khi {
				return 0, fmt.Errorf("%s: no multiple of %v lies within minimum and maximum", l, *vv.MultipleOf)
			}
			khi = min(khi, klo+100)
		}
		return g.int64Between(klo, khi) * step, nil
	}
	if !hasLo && !hasHi && g.chance(0.1) {
		// edges where the schema sets none
		edges := []int64{0, 1, -1, math.MaxInt32, math.MinInt32}
		if vv == nil || vv.Format != "int32" {
			edges = append(edges, 1<<40)
		}
		return edges[g.r.IntN(len(edges))], nil
	}
	if (hasLo || hasHi) && g.chance(0.2) {
		// the schema's bounds themselves
		if hasLo && (!hasHi || g.chance(0.5)) {
			return lo, nil
		}
		return hi, nil
	}
	return g.int64Between(wlo, whi), nil
}

func (g *generator) int64Between(lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	return lo + g.r.Int64N(hi-lo+1)
}

func (g *generator) number(s *structuralschema.Structural, l loc) (any, error) {
	if err := unrepresentableBound(s, "number"); err != nil {
		return nil, fmt.Errorf("%s: %w", l, err)
	}
	vv := s.ValueValidation
	lo, hi := -1000.0, 1000.0
	var hasLo, hasHi, exLo, exHi bool
	if vv != nil && vv.Minimum != nil {
		lo, hasLo, exLo = *vv.Minimum, true, vv.ExclusiveMinimum
	}
	if vv != nil && vv.Maximum != nil {
		hi, hasHi, exHi = *vv.Maximum, true, vv.ExclusiveMaximum
	}
	switch {
	case hasLo && !hasHi:
		hi = lo + 1000
	case !hasLo && hasHi:
		lo = hi - 1000
	}
	inRange := func(v float64) bool {
		if v < lo || v > hi || (exLo && v == lo) || (exHi && v == hi) {
			return false
		}
		return !(vv != nil && vv.Format == "float" && math.Abs(v) > math.MaxFloat32)
	}
	if lo > hi {
		return nil, fmt.Errorf("%s: no number lies within minimum and maximum", l)
	}
	if vv != nil && vv.MultipleOf != nil {
		m := *vv.MultipleOf
		klo, khi := math.Ceil(lo/m), math.Floor(hi/m)
		if klo > khi {
			return nil, fmt.Errorf("%s: no multiple of %v lies within minimum and maximum", l, m)
		}
		for a := 0; a < attempts; a++ {
			k := klo + math.Floor(g.r.Float64()*(khi-klo+1))
			if a == attempts-1 {
				k = 0
			}
			v := k * m
			if m < 1 {
				v = k / (1 / m)
			}
			n := jsonval.Normalize(v)
			if inRange(v) && validate.MultipleOfNativeType("", "", n, m) == nil {
				return n, nil
			}
		}
		return nil, fmt.Errorf("%s: cannot find a multiple of %v within minimum and maximum", l, m)
	}
	for a := 0; a < attempts; a++ {
		var v float64
		switch r := g.r.IntN(10); {
		case r < 2 && (hasLo || hasHi):
			if hasLo && (!hasHi || g.chance(0.5)) {
				v = lo
			} else {
				v = hi
			}
		case r < 6:
			v = math.Round(lo + g.r.Float64()*(hi-lo))
		default:
			v = math.Round((lo+g.r.Float64()*(hi-lo))*100) / 100
		}
		if inRange(v) {
			return jsonval.Normalize(v), nil
		}
	}
	// a narrow or exclusive range: its midpoint
	if v := lo + (hi-lo)/2; inRange(v) {
		return jsonval.Normalize(v), nil
	}
	return nil, fmt.Errorf("%s: cannot find a number within minimum and maximum", l)
}

// str generates a string honouring enum (by the caller), min/maxLength,
// format and pattern.
func (g *generator) str(s *structuralschema.Structural, l loc) (string, error) {
	minL, maxL := 0, -1
	pattern, format := "", ""
	if vv := s.ValueValidation; vv != nil {
		if vv.MinLength != nil {
			minL = int(*vv.MinLength)
		}
		if vv.MaxLength != nil {
			maxL = int(*vv.MaxLength)
		}
		pattern = vv.Pattern
		format = g.env.format(s)
	}
	if maxL >= 0 && minL > maxL {
		return "", fmt.Errorf("%s: minLength %d exceeds maxLength %d", l, minL, maxL)
	}
	hi := max(minL, 12)
	if maxL >= 0 && maxL < hi {
		hi = maxL
	}
	var re *syntax.Regexp
	if pattern != "" {
		p, err := g.env.pattern(pattern)
		if err != nil {
			return "", fmt.Errorf("%s: %w", l, err)
		}
		re = p.ast
	}
	gen := formatGenerators[format]
	if gen == nil && re == nil && s.ValueValidation != nil {
		gen = formatHints[s.ValueValidation.Format]
	}
	var last string
	for a := 0; a < attempts; a++ {
		var cand string
		switch {
		case gen != nil:
			cand = gen(g)
		case re != nil:
			cand = g.fromRegex(re, g.between(minL, hi))
			if n := utf8.RuneCountInString(cand); n < minL && a%2 == 1 {
				// an unanchored pattern may match inside a longer string
				cand += g.randString(lowerAlnum, minL-n)
			}
		default:
			cand = g.plainString(minL, hi)
		}
		if g.env.stringOK(s, cand) == nil {
			return cand, nil
		}
		last = cand
	}
	return "", fmt.Errorf("%s: no generated string satisfied %s after %d attempts (last %q: %w)", l, describeString(minL, maxL, pattern, format), attempts, last, g.env.stringOK(s, last))
}

func describeString(minL, maxL int, pattern, format string) string {
	var parts []string
	if minL > 0 {
		parts = append(parts, fmt.Sprintf("minLength %d", minL))
	}
	if maxL >= 0 {
		parts = append(parts, fmt.Sprintf("maxLength %d", maxL))
	}
	if pattern != "" {
		parts = append(parts, fmt.Sprintf("pattern %q", pattern))
	}
	if format != "" {
		parts = append(parts, fmt.Sprintf("format %q", format))
	}
	return strings.Join(parts, ", ")
}

const (
	lowerAlnum  = "abcdefghijklmnopqrstuvwxyz0123456789"
	lowerDash   = "abcdefghijklmnopqrstuvwxyz0123456789-"
	printable   = " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"
	hexDigits   = "0123456789abcdef"
	decDigits   = "0123456789"
	lowerLetter = "abcdefghijklmnopqrstuvwxyz"
)

var unicodeRunes = []rune("éßñΩж日本中🚀✓")

// plainString returns a string of lo..hi runes: usually lower-case
// alphanumerics and dashes, sometimes any printable ASCII (quotes, braces,
// `${`, `{{`), sometimes non-ASCII.
func (g *generator) plainString(lo, hi int) string {
	var n int
	switch r := g.r.IntN(10); {
	case r == 0:
		n = lo
	case r == 1:
		n = hi
	default:
		n = g.between(lo, hi)
	}
	switch r := g.r.IntN(20); {
	case r < 14:
		return g.randString(lowerDash, n)
	case r < 17:
		return g.randString(printable, n)
	default:
		rs := make([]rune, n)
		for i := range rs {
			if g.chance(0.5) {
				rs[i] = unicodeRunes[g.r.IntN(len(unicodeRunes))]
			} else {
				rs[i] = rune(lowerAlnum[g.r.IntN(len(lowerAlnum))])
			}
		}
		return string(rs)
	}
}

func (g *generator) randString(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

// dnsLabel returns a DNS-1123 label of 1..maxLen characters.
func (g *generator) dnsLabel(maxLen int) string {
	n := g.between(1, maxLen)
	b := []byte(g.randString(lowerDash, n))
	b[0] = lowerLetter[g.r.IntN(len(lowerLetter))]
	b[n-1] = lowerAlnum[g.r.IntN(len(lowerAlnum))]
	return string(b)
}

// formatGenerators produce values for the formats the API server checks
// (k8s.io/apiextensions-apiserver/pkg/apiserver/validation/formats.go), keyed
// by their normalized name (dashes removed, as go-openapi does).
var formatGenerators = map[string]func(g *generator) string{
	"bsonobjectid": func(g *generator) string { return g.randString(hexDigits, 24) },
	"uri": func(g *generator) string {
		return []string{"https", "http"}[g.r.IntN(2)] + "://" + g.hostname() + []string{"", "/", "/" + g.dnsLabel(8), ":8080/" + g.dnsLabel(5) + "?q=" + g.randString(lowerAlnum, 3)}[g.r.IntN(4)]
	},
	"email":    func(g *generator) string { return g.dnsLabel(10) + "@" + g.hostname() },
	"hostname": func(g *generator) string { return g.hostname() },
	"ipv4":     func(g *generator) string { return g.ipv4() },
	"ipv6":     func(g *generator) string { return g.ipv6() },
	"cidr": func(g *generator) string {
		if g.chance(0.7) {
			return fmt.Sprintf("%s/%d", g.ipv4(), g.between(0, 32))
		}
		return fmt.Sprintf("%s/%d", g.ipv6(), g.between(0, 128))
	},
	"mac": func(g *generator) string {
		parts := make([]string, 6)
		for i := range parts {
			parts[i] = g.randString(hexDigits, 2)
		}
		return strings.Join(parts, ":")
	},
	"uuid":  func(g *generator) string { return g.uuid('4') },
	"uuid3": func(g *generator) string { return g.uuid('3') },
	"uuid4": func(g *generator) string { return g.uuid('4') },
	"uuid5": func(g *generator) string { return g.uuid('5') },
	"isbn": func(g *generator) string {
		if g.chance(0.5) {
			return g.isbn10()
		}
		return g.isbn13()
	},
	"isbn10":     func(g *generator) string { return g.isbn10() },
	"isbn13":     func(g *generator) string { return g.isbn13() },
	"creditcard": func(g *generator) string { return luhn("4" + g.randString(decDigits, 14)) },
	"ssn": func(g *generator) string {
		return fmt.Sprintf("%03d-%02d-%04d", g.between(1, 665), g.between(1, 99), g.between(1, 9999))
	},
	"hexcolor": func(g *generator) string { return "#" + g.randString(hexDigits, 3*g.between(1, 2)) },
	"rgbcolor": func(g *generator) string {
		return fmt.Sprintf("rgb(%d,%d,%d)", g.r.IntN(256), g.r.IntN(256), g.r.IntN(256))
	},
	"byte": func(g *generator) string {
		b := make([]byte, g.between(0, 12))
		for i := range b {
			b[i] = byte(g.r.IntN(256))
		}
		return base64.StdEncoding.EncodeToString(b)
	},
	"password": func(g *generator) string { return g.randString(printable, g.between(0, 16)) },
	"date":     func(g *generator) string { return g.time().Format(time.DateOnly) },
	"datetime": func(g *generator) string {
		t := g.time()
		switch g.r.IntN(3) {
		case 0:
			return t.UTC().Format(time.RFC3339)
		case 1:
			return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
		default:
			return t.In(time.FixedZone("", 3600*g.between(-11, 12))).Format(time.RFC3339)
		}
	},
	"duration": func(g *generator) string {
		units := []string{"ms", "s", "m", "h"}
		d := fmt.Sprintf("%d%s", g.between(0, 90), units[g.r.IntN(len(units))])
		if g.chance(0.3) {
			d = fmt.Sprintf("%dh%dm", g.between(1, 12), g.between(1, 59))
		}
		return d
	},
	"k8sshortname": func(g *generator) string { return g.dnsLabel(20) },
	"k8slongname": func(g *generator) string {
		if g.chance(0.5) {
			return g.dnsLabel(20)
		}
		return g.dnsLabel(10) + "." + g.dnsLabel(10) + ".io"
	},
}

// formatHints generate plausible strings for formats the API server does not
// check (stripped from the validation schema); used only when the field has no
// pattern.
var formatHints = map[string]func(g *generator) string{
	"int-or-string": func(g *generator) string {
		if g.chance(0.5) {
			return fmt.Sprint(g.between(1, 65535))
		}
		return g.dnsLabel(8)
	},
	"quantity": func(g *generator) string {
		return fmt.Sprintf("%d%s", g.between(1, 512), []string{"", "m", "Mi", "Gi", "k"}[g.r.IntN(5)])
	},
}

func (g *generator) hostname() string {
	switch g.r.IntN(3) {
	case 0:
		return g.dnsLabel(12)
	case 1:
		return g.dnsLabel(10) + ".example.com"
	default:
		return g.dnsLabel(8) + "." + g.dnsLabel(8) + ".svc"
	}
}

func (g *generator) ipv4() string {
	return fmt.Sprintf("%d.%d.%d.%d", g.between(1, 254), g.r.IntN(256), g.r.IntN(256), g.between(1, 254))
}

func (g *generator) ipv6() string {
	if g.chance(0.3) {
		return fmt.Sprintf("fd00::%x", g.r.IntN(0x10000))
	}
	parts := make([]string, 8)
	for i := range parts {
		parts[i] = fmt.Sprintf("%x", g.r.IntN(0x10000))
	}
	return strings.Join(parts, ":")
}

func (g *generator) uuid(version byte) string {
	b := []byte(g.randString(hexDigits, 32))
	b[12] = version
	b[16] = "89ab"[g.r.IntN(4)]
	return fmt.Sprintf("%s-%s-%s-%s-%s", b[0:8], b[8:12], b[12:16], b[16:20], b[20:32])
}

func (g *generator) time() time.Time {
	start := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	end := time.Date(2035, 12, 31, 0, 0, 0, 0, time.UTC).Unix()
	return time.Unix(start+g.r.Int64N(end-start), 0).UTC()
}

func (g *generator) isbn10() string {
	d := g.randString(decDigits, 9)
	sum := 0
	for i := 0; i < 9; i++ {
		sum += (i + 1) * int(d[i]-'0')
	}
	c := sum % 11
	if c == 10 {
		return d + "X"
	}
	return d + string(rune('0'+c))
}

func (g *generator) isbn13() string {
	d := "978" + g.randString(decDigits, 9)
	sum := 0
	for i := 0; i < 12; i++ {
		w := 1
		if i%2 == 1 {
			w = 3
		}
		sum += w * int(d[i]-'0')
	}
	return d + string(rune('0'+(10-sum%10)%10))
}

// luhn appends the Luhn check digit to digits.
func luhn(digits string) string {
	sum := 0
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if (len(digits)-1-i)%2 == 0 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return digits + string(rune('0'+(10-sum%10)%10))
}

// fromRegex generates a string matching re (a parsed, simplified RE2
// expression), aiming at target runes where repetition is open-ended.
func (g *generator) fromRegex(re *syntax.Regexp, target int) string {
	x := &rxgen{g: g, target: target}
	x.gen(re)
	return x.b.String()
}

type rxgen struct {
	g      *generator
	target int
	n      int
	b      strings.Builder
}

func (x *rxgen) emit(r rune) {
	x.b.WriteRune(r)
	x.n++
}

func (x *rxgen) gen(re *syntax.Regexp) {
	g := x.g
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 && g.chance(0.3) {
				r = swapCase(r)
			}
			x.emit(r)
		}
	case syntax.OpCharClass:
		x.emit(x.classRune(re.Rune))
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		x.emit(rune(lowerAlnum[g.r.IntN(len(lowerAlnum))]))
	case syntax.OpCapture:
		x.gen(re.Sub[0])
	case syntax.OpConcat:
		for _, s := range re.Sub {
			x.gen(s)
		}
	case syntax.OpAlternate:
		x.gen(re.Sub[g.r.IntN(len(re.Sub))])
	case syntax.OpStar:
		x.repeat(re.Sub[0], 0, -1)
	case syntax.OpPlus:
		x.repeat(re.Sub[0], 1, -1)
	case syntax.OpQuest:
		x.repeat(re.Sub[0], 0, 1)
	case syntax.OpRepeat:
		x.repeat(re.Sub[0], re.Min, re.Max)
	default:
		// OpEmptyMatch, anchors, word boundaries: nothing to emit (the
		// result is verified against the pattern afterwards).
	}
}

func (x *rxgen) repeat(sub *syntax.Regexp, lo, hi int) {
	if hi < 0 {
		// open-ended: grow toward the target length
		hi = lo + max(x.target-x.n, 1)
		hi = min(hi, lo+64)
	}
	n := x.g.between(lo, hi)
	for i := 0; i < n; i++ {
		x.gen(sub)
	}
}

// classRune picks a rune from a character class, preferring printable ASCII.
func (x *rxgen) classRune(ranges []rune) rune {
	g := x.g
	type span struct{ lo, hi rune }
	var ascii, all []span
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		all = append(all, span{lo, hi})
		if l, h := max(lo, 0x21), min(hi, 0x7e); l <= h {
			ascii = append(ascii, span{l, h})
		}
	}
	pick := ascii
	if len(pick) == 0 || g.chance(0.05) {
		pick = all
	}
	if len(pick) == 0 {
		return 'a'
	}
	total := 0
	for _, s := range pick {
		total += int(s.hi-s.lo) + 1
	}
	k := g.r.IntN(total)
	for _, s := range pick {
		size := int(s.hi-s.lo) + 1
		if k < size {
			r := s.lo + rune(k)
			if r >= 0xD800 && r <= 0xDFFF || r > utf8.MaxRune {
				return 'a'
			}
			return r
		}
		k -= size
	}
	return 'a'
}

func swapCase(r rune) rune {
	switch {
	case r >= 'a' && r <= 'z':
		return r - 'a' + 'A'
	case r >= 'A' && r <= 'Z':
		return r - 'A' + 'a'
	}
	return r
}
