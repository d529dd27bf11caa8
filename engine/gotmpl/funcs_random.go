package gotmpl

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/big"
)

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
