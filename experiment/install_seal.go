package experiment

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// AESSealer seals credentials with AES-256-GCM: a fresh 12-byte nonce per
// seal, stored in front of the ciphertext. A leaked database row is useless
// without the key, and an altered one fails to open instead of yielding a
// wrong token.
type AESSealer struct{ aead cipher.AEAD }

// NewAESSealer takes a 32-byte key.
func NewAESSealer(key []byte) (*AESSealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("experiment.NewAESSealer: the key must be 32 bytes, not %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("experiment.NewAESSealer: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("experiment.NewAESSealer: %w", err)
	}
	return &AESSealer{aead: aead}, nil
}

// Seal implements TokenSealer.
func (s *AESSealer) Seal(plaintext []byte) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("experiment.AESSealer.Seal: %w", err)
	}
	return s.aead.Seal(nonce, nonce, plaintext, nil), nil
}

// Open implements TokenSealer.
func (s *AESSealer) Open(sealed []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n+s.aead.Overhead() {
		return nil, fmt.Errorf("experiment.AESSealer.Open: %w (too short)", ErrUnsealable)
	}
	out, err := s.aead.Open(nil, sealed[:n], sealed[n:], nil)
	if err != nil {
		return nil, fmt.Errorf("experiment.AESSealer.Open: %w (%v)", ErrUnsealable, err)
	}
	return out, nil
}

// QueryHMAC is the signature the platform puts on an OAuth redirect: hex
// HMAC-SHA256, keyed with the app secret, of the query without `hmac` (and
// the legacy `signature`), as key=value pairs sorted by key and joined
// with &. A repeated key's values are joined with commas.
func QueryHMAC(q url.Values, secret []byte) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		if k != "hmac" && k != "signature" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strings.Join(q[k], ",")
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(strings.Join(parts, "&")))
	return hex.EncodeToString(m.Sum(nil))
}

// VerifyQueryHMAC compares in constant time.
func VerifyQueryHMAC(q url.Values, secret []byte) bool {
	got, err := hex.DecodeString(q.Get("hmac"))
	if err != nil || len(secret) == 0 {
		return false
	}
	want, _ := hex.DecodeString(QueryHMAC(q, secret))
	return hmac.Equal(got, want)
}
