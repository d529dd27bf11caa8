package jsonval

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

var jsonCorpus = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1`, `-1`, `12345678901234567`,
	`9223372036854775807`, `-9223372036854775808`, `9223372036854775808`, `-9223372036854775809`,
	`1.5`, `-0.0`, `1e3`, `1E-7`, `1e21`, `123456789012345678901234567890`, `1e400`, `-1e400`,
	`""`, `"a"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u20ac\ud83d\ude00"`, `"\ud800"`, `"\ud800x"`, `"\udc00\ud800"`,
	`"\ud83dz"`, `"é€😀"`, "\"\xff\xfe\"", "\"a\xc3\"", `"\u2028\u2029"`, `"<>&"`,
	`{"a":1,"a":2}`, `{"b":[1,2,{"c":null}],"a":{"x":"y"}}`, ` { "a" : [ 1 , 2 ] } `,
	`{"apiVersion":"demo.orkestra.io/v1","kind":"Website","metadata":{"name":"x","labels":{"a":"b"}},"spec":{"replicas":3,"ratio":0.5}}`,
	// invalid
	``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{"a"}`, `{a:1}`, `"abc`, `"\x"`, `"\u12"`, "\"a\x01\"", `01`, `1.`, `.5`, `1e`, `-`, `+1`,
	`tru`, `nul`, `falsey`, `[1 2]`, `{"a":1 "b":2}`, `1 2`, `[`, `"\`, `{"a":`, `-01`, `NaN`, `[-]`,
}

func decodeBoth(t testing.TB, in string) (mine any, myErr error, theirs any, theirErr error) {
	mine, myErr = Decode([]byte(in))
	theirErr = utiljson.Unmarshal([]byte(in), &theirs)
	return
}

func TestDecodeJSONMatchesApimachinery(t *testing.T) {
	for _, in := range jsonCorpus {
		mine, myErr, theirs, theirErr := decodeBoth(t, in)
		if (myErr != nil) != (theirErr != nil) {
			t.Errorf("%q: error %v, apimachinery error %v", in, myErr, theirErr)
			continue
		}
		if myErr == nil && !reflect.DeepEqual(mine, theirs) {
			t.Errorf("%q: got %#v, apimachinery %#v", in, mine, theirs)
		}
	}
}

func TestDecodeJSONDepthLimit(t *testing.T) {
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	if _, err := Decode([]byte(deep)); err == nil || !strings.Contains(err.Error(), "depth") {
		t.Fatalf("nesting deeper than %d: got %v", maxDepth, err)
	}
	ok := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	if _, err := Decode([]byte(ok)); err != nil {
		t.Fatal(err)
	}
}

// stdEncode is what encoding/json writes for v, without HTML escaping.
func stdEncode(t testing.TB, v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func FuzzDecodeJSON(f *testing.F) {
	for _, in := range jsonCorpus {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		mine, myErr, theirs, theirErr := decodeBoth(t, in)
		if (myErr != nil) != (theirErr != nil) {
			t.Fatalf("%q: error %v, apimachinery error %v", in, myErr, theirErr)
		}
		if myErr != nil {
			return
		}
		if !reflect.DeepEqual(mine, theirs) {
			t.Fatalf("%q: got %#v, apimachinery %#v", in, mine, theirs)
		}
		// Encoding what was decoded matches encoding/json too.
		want, err := stdEncode(t, theirs)
		if err != nil {
			return
		}
		got, err := Append(nil, mine)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%q: encoded %s (%v), encoding/json %s", in, got, err, want)
		}
	})
}
