package cel

import (
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// lang is a regular language of whole strings (a regexp's NFA), used to
// prove that every string a schema's pattern admits parses (int(),
// duration(), quantity(), …), or matches a guard.
type lang struct {
	prog *syntax.Prog
	// maxLen bounds the strings (0: unbounded): a schema's maxLength.
	maxLen int
}

// maxLenTracked is the longest maxLength taken into account; longer bounds
// are dropped (the proof then holds without them, or is not found).
const maxLenTracked = 64

// exploreBudget bounds the state pairs an inclusion proof visits.
const exploreBudget = 20000

var (
	anyString = &syntax.Regexp{Op: syntax.OpStar, Flags: syntax.DotNL, Sub: []*syntax.Regexp{{Op: syntax.OpAnyChar, Flags: syntax.DotNL}}}
)

// patternLang is the language of an OpenAPI pattern — which, like RE2,
// matches anywhere in the string unless anchored — limited to maxLen
// characters. ok is false for patterns this proof does not model (line
// anchors or word boundaries).
func patternLang(pattern string, maxLen int64) (*lang, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, false
	}
	re = re.Simplify()
	var subs []*syntax.Regexp
	if re.Op == syntax.OpConcat {
		subs = append(subs, re.Sub...)
	} else {
		subs = []*syntax.Regexp{re}
	}
	if len(subs) > 0 && subs[0].Op == syntax.OpBeginText {
		subs = subs[1:]
	} else {
		subs = append([]*syntax.Regexp{anyString}, subs...)
	}
	if n := len(subs); n > 0 && subs[n-1].Op == syntax.OpEndText {
		subs = subs[:n-1]
	} else {
		subs = append(subs, anyString)
	}
	body := &syntax.Regexp{Op: syntax.OpConcat, Sub: subs}
	if len(subs) == 0 {
		body = &syntax.Regexp{Op: syntax.OpEmptyMatch}
	}
	l, ok := compileLang(body)
	if ok && maxLen > 0 && maxLen <= maxLenTracked {
		l.maxLen = int(maxLen)
	}
	return l, ok
}

// exactLang is the language of an anchored regexp written for this file.
func exactLang(expr string) *lang {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		panic("regexlang: " + err.Error())
	}
	l, ok := compileLang(re)
	if !ok {
		panic("regexlang: cannot model " + expr)
	}
	return l
}

// enumLang is the language of a finite set of strings.
func enumLang(values []string) *lang {
	alts := make([]string, len(values))
	for i, v := range values {
		alts[i] = regexpQuote(v)
	}
	return exactLang("^(?:" + strings.Join(alts, "|") + ")$")
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func compileLang(re *syntax.Regexp) (*lang, bool) {
	ok := true
	var walk func(r *syntax.Regexp)
	walk = func(r *syntax.Regexp) {
		switch r.Op {
		case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
			ok = false
		case syntax.OpBeginText, syntax.OpEndText:
			// Anchors at the ends of an exact regexp only.
		}
		for _, s := range r.Sub {
			walk(s)
		}
	}
	walk(re)
	if !ok {
		return nil, false
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, false
	}
	return &lang{prog: prog}, true
}

// subsetOf reports whether every string of a is in b. proven is false when
// a string of a is not in b, or when the proof ran out of budget.
func (a *lang) subsetOf(b *lang) (proven bool) {
	classes := symbolClasses(a.prog, b.prog)
	type pair struct {
		x, y string
		n    int
	}
	startA, okA := closure(a.prog, []uint32{uint32(a.prog.Start)})
	startB, okB := closure(b.prog, []uint32{uint32(b.prog.Start)})
	if !okA || !okB {
		return false
	}
	seen := map[pair]bool{}
	type state struct {
		x, y []uint32
		n    int
	}
	queue := []state{{startA, startB, 0}}
	seen[pair{key(startA), key(startB), 0}] = true
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if accepts(a.prog, s.x) && !accepts(b.prog, s.y) {
			return false
		}
		if a.maxLen > 0 && s.n >= a.maxLen {
			continue
		}
		for _, r := range classes {
			nx, ok := advance(a.prog, s.x, r)
			if !ok {
				return false
			}
			if len(nx) == 0 {
				continue
			}
			ny, ok := advance(b.prog, s.y, r)
			if !ok {
				return false
			}
			n := 0
			if a.maxLen > 0 {
				n = s.n + 1
			}
			p := pair{key(nx), key(ny), n}
			if seen[p] {
				continue
			}
			if len(seen) >= exploreBudget {
				return false
			}
			seen[p] = true
			queue = append(queue, state{nx, ny, n})
		}
	}
	return true
}

// symbolClasses returns one rune of every class of runes that no
// instruction of the programs tells apart.
func symbolClasses(progs ...*syntax.Prog) []rune {
	bounds := map[rune]bool{0: true}
	for _, p := range progs {
		for _, in := range p.Inst {
			switch in.Op {
			case syntax.InstRune:
				for i := 0; i+1 < len(in.Rune); i += 2 {
					bounds[in.Rune[i]] = true
					bounds[in.Rune[i+1]+1] = true
				}
				if len(in.Rune) == 1 {
					// A single rune, possibly matched case-insensitively:
					// every rune of its fold orbit is its own class.
					r := in.Rune[0]
					for f := r; ; {
						bounds[f] = true
						bounds[f+1] = true
						if f = unicode.SimpleFold(f); f == r {
							break
						}
					}
				}
			case syntax.InstRune1:
				bounds[in.Rune[0]] = true
				bounds[in.Rune[0]+1] = true
			case syntax.InstRuneAnyNotNL:
				bounds['\n'] = true
				bounds['\n'+1] = true
			}
		}
	}
	out := make([]rune, 0, len(bounds))
	for r := range bounds {
		if r <= unicode.MaxRune {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// closure adds the instructions reachable without reading a rune; ok is
// false on an instruction this proof does not model.
func closure(p *syntax.Prog, set []uint32) ([]uint32, bool) {
	in := map[uint32]bool{}
	stack := append([]uint32(nil), set...)
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if in[pc] {
			continue
		}
		in[pc] = true
		i := &p.Inst[pc]
		switch i.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, i.Out, i.Arg)
		case syntax.InstCapture, syntax.InstNop:
			stack = append(stack, i.Out)
		case syntax.InstEmptyWidth:
			// Only the anchors at both ends of an exact regexp remain:
			// they hold at the start and end of a whole string.
			if syntax.EmptyOp(i.Arg)&^(syntax.EmptyBeginText|syntax.EmptyEndText) != 0 {
				return nil, false
			}
			stack = append(stack, i.Out)
		}
	}
	out := make([]uint32, 0, len(in))
	for pc := range in {
		out = append(out, pc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, true
}

func advance(p *syntax.Prog, set []uint32, r rune) ([]uint32, bool) {
	var next []uint32
	for _, pc := range set {
		i := &p.Inst[pc]
		switch i.Op {
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			if i.MatchRune(r) {
				next = append(next, i.Out)
			}
		}
	}
	if len(next) == 0 {
		return nil, true
	}
	return closure(p, next)
}

func accepts(p *syntax.Prog, set []uint32) bool {
	for _, pc := range set {
		if p.Inst[pc].Op == syntax.InstMatch {
			return true
		}
	}
	return false
}

func key(set []uint32) string {
	var b strings.Builder
	for _, pc := range set {
		b.WriteString(strconv.FormatUint(uint64(pc), 36))
		b.WriteByte(',')
	}
	return b.String()
}

// minCount is the fewest times rune c occurs in any string of the
// pattern's language (a pattern that matches anywhere counts only what its
// match must contain).
func minCount(pattern string, c rune) int {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 0
	}
	var count func(r *syntax.Regexp) int
	count = func(r *syntax.Regexp) int {
		switch r.Op {
		case syntax.OpLiteral:
			if r.Flags&syntax.FoldCase != 0 {
				return 0
			}
			n := 0
			for _, x := range r.Rune {
				if x == c {
					n++
				}
			}
			return n
		case syntax.OpCharClass:
			if len(r.Rune) == 2 && r.Rune[0] == c && r.Rune[1] == c {
				return 1
			}
			return 0
		case syntax.OpCapture:
			return count(r.Sub[0])
		case syntax.OpConcat:
			n := 0
			for _, s := range r.Sub {
				n += count(s)
			}
			return n
		case syntax.OpAlternate:
			n := -1
			for _, s := range r.Sub {
				if m := count(s); n < 0 || m < n {
					n = m
				}
			}
			return max(n, 0)
		case syntax.OpPlus:
			return count(r.Sub[0])
		case syntax.OpRepeat:
			return r.Min * count(r.Sub[0])
		}
		return 0
	}
	return count(re)
}

// The languages the conversion functions accept, narrowed so that every
// string of them converts (no overflow): int(), uint(), double(),
// duration(), timestamp() and quantity() of a string.
var (
	intLang    = exactLang(`^[+-]?[0-9]{1,18}$`)
	uintLang   = exactLang(`^[0-9]{1,19}$`)
	doubleLang = exactLang(`^[+-]?(?:[0-9]{1,30}(?:\.[0-9]*)?|\.[0-9]{1,30})(?:[eE][+-]?[0-9]{1,2})?$`)
	// Go durations (time.ParseDuration) of at most about 1.4e18 ns.
	durationLang = exactLang(`^[-+]?(?:0|` +
		`[0-9]{1,6}(?:\.[0-9]{1,9})?h(?:[0-9]{1,7}(?:\.[0-9]{1,9})?m)?(?:[0-9]{1,9}(?:\.[0-9]{1,9})?s)?` +
		`|[0-9]{1,7}(?:\.[0-9]{1,9})?m(?:[0-9]{1,9}(?:\.[0-9]{1,9})?s)?` +
		`|[0-9]{1,9}(?:\.[0-9]{1,9})?(?:s|ms|us|µs|ns))$`)
	// RFC 3339 times, days up to the 28th (every month has them).
	timestampLang = exactLang(`^(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})-(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,9})?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])$`)
	// Kubernetes quantities (resource.ParseQuantity).
	quantityLang = exactLang(`^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[numkMGTPE]|[KMGTPE]i|[eE][+-]?[0-9]{1,2})?$`)
	// Label values (validation.IsValidLabelValue).
	labelValueLang = exactLang(`^(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)
)
