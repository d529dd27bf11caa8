package jsonval

// The decoding half of the codec, for the /convert hot path (webhook's
// review.go reads a ConversionReview with it). A ConversionReview is decoded
// in one pass: the review's own fields into the apiextensions types, each
// object straight into unstructured content (map[string]any with int64 for
// integers, as k8s.io/apimachinery/pkg/util/json does), keeping a slice of
// the object's raw bytes beside it. Converted objects are encoded into the
// response buffer directly. encoding/json would scan every object three times
// on the way in (validate the review, skip into a RawExtension, decode the
// RawExtension) and twice on the way out (marshal, compact the RawExtension);
// see BenchmarkConvertReview.
//
// Decoding follows encoding/json: invalid UTF-8 in strings becomes U+FFFD,
// duplicate keys keep the last value, control characters in strings and
// nesting deeper than maxDepth are errors. Unlike encoding/json, the review's
// field names are matched case-sensitively (the API server writes them
// exactly). Numbers without fraction or exponent that fit in int64 decode as
// int64, all others as float64. Encoding sorts map keys and does not escape
// HTML characters.

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

const maxDepth = 10000

// syntaxError is a JSON syntax error at a byte offset of the body.
type syntaxError struct {
	msg    string
	offset int
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.offset, e.msg)
}

type Decoder struct {
	data  []byte
	pos   int
	depth int
	// keys interns object keys: the objects of a review repeat the same
	// few dozen keys.
	keys map[string]string
}

const maxInternedKeys = 1024

// Key returns b (an object key the decoder read) as a string, interned.
func (d *Decoder) Key(b []byte) string {
	if s, ok := d.keys[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(d.keys) < maxInternedKeys && len(s) <= 64 {
		if d.keys == nil {
			d.keys = make(map[string]string, 32)
		}
		d.keys[s] = s
	}
	return s
}

// Alias returns b (an object key the decoder read) as a string that shares
// the decoder's input where b is a slice of it (a key without escapes):
// valid only while the input is, and never written to. Other keys are
// Key's. For keys kept beside slices of the input (webhook's undecoded
// metadata members), it saves the interning lookup.
func (d *Decoder) Alias(b []byte) string {
	if len(b) > 0 && len(d.data) > 0 {
		p, base := uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(unsafe.Pointer(unsafe.SliceData(d.data)))
		if p >= base && p+uintptr(len(b)) <= base+uintptr(len(d.data)) {
			return unsafe.String(unsafe.SliceData(b), len(b))
		}
	}
	return d.Key(b)
}

func (d *Decoder) Errorf(format string, args ...any) error {
	return &syntaxError{msg: fmt.Sprintf(format, args...), offset: d.pos}
}

func (d *Decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end of input.
func (d *Decoder) Peek() byte {
	d.skipSpace()
	if d.pos >= len(d.data) {
		return 0
	}
	return d.data[d.pos]
}

func (d *Decoder) unexpected() error {
	if d.pos >= len(d.data) {
		return d.Errorf("unexpected end of input")
	}
	return d.Errorf("unexpected character %q", d.data[d.pos])
}

// expect consumes c (after optional space).
func (d *Decoder) expect(c byte) error {
	if d.Peek() != c {
		if d.pos >= len(d.data) {
			return d.Errorf("unexpected end of input, expected %q", c)
		}
		return d.Errorf("unexpected character %q, expected %q", d.data[d.pos], c)
	}
	d.pos++
	return nil
}

// end checks that nothing but space follows the top-level value.
func (d *Decoder) End() error {
	if d.skipSpace(); d.pos < len(d.data) {
		return d.Errorf("unexpected data after the top-level value")
	}
	return nil
}

// object iterates over the members of an object: f is called with each key,
// the Decoder positioned at the member's value, and must consume the value.
func (d *Decoder) Object(f func(key []byte) error) error {
	if err := d.expect('{'); err != nil {
		return err
	}
	if d.depth++; d.depth > maxDepth {
		return d.Errorf("exceeded max depth")
	}
	if d.Peek() == '}' {
		d.pos++
		d.depth--
		return nil
	}
	var scratch [64]byte
	for {
		if d.Peek() != '"' {
			return d.Errorf("expected a string key")
		}
		key, err := d.stringBytes(scratch[:0])
		if err != nil {
			return err
		}
		if err := d.expect(':'); err != nil {
			return err
		}
		d.skipSpace()
		if err := f(key); err != nil {
			return err
		}
		switch d.Peek() {
		case ',':
			d.pos++
		case '}':
			d.pos++
			d.depth--
			return nil
		default:
			return d.unexpected()
		}
	}
}

// array iterates over the items of an array; f must consume each item.
func (d *Decoder) Array(f func(i int) error) error {
	if err := d.expect('['); err != nil {
		return err
	}
	if d.depth++; d.depth > maxDepth {
		return d.Errorf("exceeded max depth")
	}
	if d.Peek() == ']' {
		d.pos++
		d.depth--
		return nil
	}
	for i := 0; ; i++ {
		d.skipSpace()
		if err := f(i); err != nil {
			return err
		}
		switch d.Peek() {
		case ',':
			d.pos++
		case ']':
			d.pos++
			d.depth--
			return nil
		default:
			return d.unexpected()
		}
	}
}

// isNull consumes a null literal if one follows.
func (d *Decoder) IsNull() (bool, error) {
	if d.Peek() != 'n' {
		return false, nil
	}
	return true, d.Literal("null")
}

func (d *Decoder) Literal(lit string) error {
	if len(d.data)-d.pos < len(lit) || string(d.data[d.pos:d.pos+len(lit)]) != lit {
		return d.Errorf("invalid literal, expected %s", lit)
	}
	d.pos += len(lit)
	return nil
}

// value decodes any JSON value into unstructured content.
func (d *Decoder) Value() (any, error) {
	switch c := d.Peek(); c {
	case '{':
		return d.MapValue()
	case '[':
		var l []any
		err := d.Array(func(int) error {
			v, err := d.Value()
			l = append(l, v)
			return err
		})
		if err != nil {
			return nil, err
		}
		if l == nil {
			l = []any{}
		}
		return l, nil
	case '"':
		return d.String()
	case 't':
		return true, d.Literal("true")
	case 'f':
		return false, d.Literal("false")
	case 'n':
		return nil, d.Literal("null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return d.number()
		}
		return nil, d.unexpected()
	}
}

func (d *Decoder) MapValue() (map[string]any, error) {
	m := make(map[string]any, 4)
	err := d.Object(func(key []byte) error {
		v, err := d.Value()
		m[d.Key(key)] = v
		return err
	})
	return m, err
}

// string decodes a string value.
func (d *Decoder) String() (string, error) {
	start := d.pos + 1
	// Fast path: no escapes, ASCII only.
	for i := start; i < len(d.data); i++ {
		c := d.data[i]
		if c == '"' {
			d.pos = i + 1
			return string(d.data[start:i]), nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	var scratch [64]byte
	b, err := d.stringBytes(scratch[:0])
	return string(b), err
}

// stringBytes decodes a string at d.pos (which holds the opening quote),
// appending its content to buf. The result may alias d.data when the string
// needs no unescaping, and is only valid until the next call.
func (d *Decoder) stringBytes(buf []byte) ([]byte, error) {
	d.pos++ // opening quote
	start := d.pos
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		if c == '"' {
			b := d.data[start:d.pos]
			d.pos++
			return b, nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		d.pos++
	}
	buf = append(buf, d.data[start:d.pos]...)
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return buf, nil
		case c < 0x20:
			return nil, d.Errorf("invalid control character %q in string", c)
		case c == '\\':
			if d.pos+1 >= len(d.data) {
				return nil, d.Errorf("unexpected end of input in string escape")
			}
			e := d.data[d.pos+1]
			d.pos += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := d.hex4()
				if !ok {
					return nil, d.Errorf("invalid \\u escape in string")
				}
				if utf16.IsSurrogate(r) {
					// A high surrogate followed by a low one is one rune;
					// anything else is U+FFFD, as in encoding/json.
					save := d.pos
					if d.pos+1 < len(d.data) && d.data[d.pos] == '\\' && d.data[d.pos+1] == 'u' {
						d.pos += 2
						r2, ok := d.hex4()
						if !ok {
							return nil, d.Errorf("invalid \\u escape in string")
						}
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							buf = utf8.AppendRune(buf, dec)
							continue
						}
					}
					d.pos = save
					r = utf8.RuneError
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return nil, d.Errorf("invalid escape character %q in string", e)
			}
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			d.pos++
		default:
			r, size := utf8.DecodeRune(d.data[d.pos:])
			if r == utf8.RuneError && size == 1 {
				buf = utf8.AppendRune(buf, utf8.RuneError)
			} else {
				buf = append(buf, d.data[d.pos:d.pos+size]...)
			}
			d.pos += size
		}
	}
	return nil, d.Errorf("unexpected end of input in string")
}

func (d *Decoder) hex4() (rune, bool) {
	if d.pos+4 > len(d.data) {
		return 0, false
	}
	var r rune
	for _, c := range d.data[d.pos : d.pos+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	d.pos += 4
	return r, true
}

// number decodes a number: int64 when it is an integer that fits, else float64.
func (d *Decoder) number() (any, error) {
	start := d.pos
	i := d.pos
	if i < len(d.data) && d.data[i] == '-' {
		i++
	}
	switch {
	case i < len(d.data) && d.data[i] == '0':
		i++
	case i < len(d.data) && d.data[i] >= '1' && d.data[i] <= '9':
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
	default:
		d.pos = i
		return nil, d.Errorf("invalid number")
	}
	integer := true
	if i < len(d.data) && d.data[i] == '.' {
		integer = false
		i++
		if i >= len(d.data) || d.data[i] < '0' || d.data[i] > '9' {
			d.pos = i
			return nil, d.Errorf("invalid number: digits expected after the decimal point")
		}
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
	}
	if i < len(d.data) && (d.data[i] == 'e' || d.data[i] == 'E') {
		integer = false
		i++
		if i < len(d.data) && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if i >= len(d.data) || d.data[i] < '0' || d.data[i] > '9' {
			d.pos = i
			return nil, d.Errorf("invalid number: digits expected in the exponent")
		}
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
	}
	d.pos = i
	s := d.data[start:i]
	if integer {
		if len(s) < 19 { // fits in int64 without overflow checks
			var n int64
			neg := s[0] == '-'
			digits := s
			if neg {
				digits = s[1:]
			}
			for _, c := range digits {
				n = n*10 + int64(c-'0')
			}
			if neg {
				n = -n
			}
			return n, nil
		}
		if n, err := strconv.ParseInt(string(s), 10, 64); err == nil {
			return n, nil
		}
	}
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		d.pos = start
		return nil, d.Errorf("number %s out of range", s)
	}
	return f, nil
}

// skip validates and skips one value.
func (d *Decoder) Skip() error {
	switch c := d.Peek(); c {
	case '{':
		return d.Object(func([]byte) error { return d.Skip() })
	case '[':
		return d.Array(func(int) error { return d.Skip() })
	case '"':
		var scratch [64]byte
		_, err := d.stringBytes(scratch[:0])
		return err
	case 't':
		return d.Literal("true")
	case 'f':
		return d.Literal("false")
	case 'n':
		return d.Literal("null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			_, err := d.number()
			return err
		}
		return d.unexpected()
	}
}

// NewDecoder decodes data.
func NewDecoder(data []byte) *Decoder { return &Decoder{data: data} }

// Offset is the byte offset the decoder has reached.
func (d *Decoder) Offset() int { return d.pos }

// Bytes returns the input from offset from to offset to.
func (d *Decoder) Bytes(from, to int) []byte { return d.data[from:to] }

// Since returns the bytes from offset start to the current offset.
func (d *Decoder) Since(start int) []byte { return d.data[start:d.pos] }

// Decode decodes one JSON document into unstructured content.
func Decode(data []byte) (any, error) {
	d := &Decoder{data: data}
	v, err := d.Value()
	if err != nil {
		return nil, err
	}
	return v, d.End()
}
