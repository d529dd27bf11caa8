package gotmpl

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
)

// The random functions (upstream pkg/note/docs/06-random.md):
// they make a new value on every evaluation, so they are allowed only where
// the value is frozen after creation (the data of a once: true secret).

var randomFamily = family{name: "random (only in `data` of a `once: true` secret)", functions: []*function{
	{name: "randomHex", fn: fnRandomHex, random: true, translate: trRandom, cel: "randomHex", doc: "`randomHex N` (N bytes as 2N hex characters)"},
	{name: "randomAlphanumeric", fn: fnRandomAlphanumeric, random: true, translate: trRandom, cel: "randomAlphanumeric", doc: "`randomAlphanumeric N`"},
	{name: "randomBase64", fn: fnRandomBase64, random: true, doc: "`randomBase64 N` (N bytes, URL-safe, padded)",
		noCEL: "the legacy randomBase64 uses the URL-safe alphabet (- and _), CEL's randomBase64 the standard one (+ and /); kept legacy so existing consumers see the same alphabet"},
	{name: "uuidv4", fn: fnUUIDv4, random: true, translate: trUUID, cel: "uuid", doc: "`uuidv4`"},
}}

const maxRandomBytes = 4096

func randomBytes(name string, n int) ([]byte, error) {
	if n > maxRandomBytes {
		return nil, fmt.Errorf("%s: %d is more than %d", name, n, maxRandomBytes)
	}
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

// fnRandomHex returns n random bytes as 2n lowercase hex characters.
func fnRandomHex(n int) (string, error) {
	if n <= 0 {
		return "", nil
	}
	b, err := randomBytes("randomHex", n)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// fnRandomBase64 returns n random bytes in padded URL-safe base64.
func fnRandomBase64(n int) (string, error) {
	if n <= 0 {
		return "", nil
	}
	b, err := randomBytes("randomBase64", n)
	if err != nil {
		return "", err
	}
	return base64.URLEncoding.EncodeToString(b), nil
}

const alphanumeric = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// fnRandomAlphanumeric returns n characters drawn uniformly from [a-zA-Z0-9].
func fnRandomAlphanumeric(n int) (string, error) {
	if n <= 0 {
		return "", nil
	}
	if n > maxRandomBytes {
		return "", fmt.Errorf("randomAlphanumeric: %d is more than %d", n, maxRandomBytes)
	}
	out := make([]byte, n)
	limit := big.NewInt(int64(len(alphanumeric)))
	for i := range out {
		k, err := rand.Int(rand.Reader, limit)
		if err != nil {
			return "", fmt.Errorf("randomAlphanumeric: %w", err)
		}
		out[i] = alphanumeric[k.Int64()]
	}
	return string(out), nil
}

// fnUUIDv4 returns a random RFC 4122 version 4 UUID.
func fnUUIDv4() (string, error) {
	b, err := randomBytes("uuidv4", 16)
	if err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], nil
}

// ── translations ────────────────────────────────────────────────────────────

// trRandom is randomHex and randomAlphanumeric.
func trRandom(t *translator, x *call) val {
	t.arity(x, 1, 1)
	if !t.random {
		t.failf(x.id, "%s is allowed only in the data of a once: true secret", x.name())
	}
	n, ok := x.args[0].lit.(int64)
	if !ok || n <= 0 {
		t.failf(x.node(0), "%s takes a positive literal length here", x.name())
	}
	return val{kind: vString, expr: x.name() + "(" + strconv.FormatInt(n, 10) + ")", prec: precPrimary, nonEmpty: true, noEdgeSpace: true, noSpace: true, ascii: true}
}

func trUUID(t *translator, x *call) val {
	t.arity(x, 0, 0)
	if !t.random {
		t.failf(x.id, "uuidv4 is allowed only in the data of a once: true secret")
	}
	return val{kind: vString, expr: "uuid()", prec: precPrimary, nonEmpty: true, noEdgeSpace: true, noSpace: true, ascii: true}
}
