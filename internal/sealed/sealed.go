// Package sealed turns small records into opaque tokens that the gateway
// hands to a client and reads back on a later request, on any instance
// that holds the same key: AES-256-GCM over the record and its expiry,
// bound to a purpose so that a token made for one use is refused by
// another. A client can neither read nor alter a token; a changed byte, a
// token made with another key or for another purpose, and an expired one
// are all refused.
package sealed

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrInvalid is the answer to a token that was not sealed by this key for
// this purpose, or was altered.
var ErrInvalid = errors.New("the token was not issued by this gateway or was altered")

// ErrExpired is the answer to a sealed token past its expiry.
var ErrExpired = errors.New("the token has expired")

// MinKeyBytes is the shortest secret New accepts.
const MinKeyBytes = 16

// version is the first byte of every token (the format and key derivation).
const version = 1

// Box seals and opens tokens with one key.
type Box struct {
	aead cipher.AEAD
	// Now is the clock expiries are set and checked by (time.Now if nil).
	Now func() time.Time
}

// New returns a Box keyed by secret (at least MinKeyBytes bytes; any
// length: the AES key is derived from it).
func New(secret []byte) (*Box, error) {
	if len(secret) < MinKeyBytes {
		return nil, fmt.Errorf("the sealing secret must have at least %d bytes (it has %d)", MinKeyBytes, len(secret))
	}
	key := sha256.Sum256(append([]byte("toolrag sealed v1\x00"), secret...))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Random returns a Box with a fresh random key: its tokens open only in
// this process.
func Random() *Box {
	secret := make([]byte, 32)
	_, _ = rand.Read(secret) // crypto/rand.Read never fails
	b, _ := New(secret)
	return b
}

func (b *Box) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

type envelope struct {
	Exp int64           `json:"e"` // unix seconds
	V   json.RawMessage `json:"v"`
}

// Seal returns v (encoded as JSON) sealed for purpose, valid for ttl.
func (b *Box) Seal(purpose string, v any, ttl time.Duration) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	plain, err := json.Marshal(envelope{Exp: b.now().Add(ttl).Unix(), V: raw})
	if err != nil {
		return "", err
	}
	out := make([]byte, 1+b.aead.NonceSize(), 1+b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	out[0] = version
	_, _ = rand.Read(out[1:])
	out = b.aead.Seal(out, out[1:1+b.aead.NonceSize()], plain, []byte(purpose))
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// Open reads a token sealed for purpose into v. It returns ErrInvalid or
// ErrExpired when the token cannot be used.
func (b *Box) Open(purpose, token string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	n := b.aead.NonceSize()
	if err != nil || len(raw) < 1+n+b.aead.Overhead() || raw[0] != version {
		return ErrInvalid
	}
	plain, err := b.aead.Open(nil, raw[1:1+n], raw[1+n:], []byte(purpose))
	if err != nil {
		return ErrInvalid
	}
	var env envelope
	if err := json.Unmarshal(plain, &env); err != nil {
		return ErrInvalid
	}
	if b.now().Unix() >= env.Exp {
		return ErrExpired
	}
	if err := json.Unmarshal(env.V, v); err != nil {
		return ErrInvalid
	}
	return nil
}
