package vault

import (
	"bufio"
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// KeyFile seals with AES-256-GCM under keys read from a file: one key a
// line, "<key id> <base64 of 32 bytes>"; the first line is the key new
// values are sealed with, the others still open what they sealed (rotate
// by adding a new first line). The file is created with one fresh key on
// first use, mode 0600, and refused when others may read it.
type KeyFile struct {
	current string
	aeads   map[string]cipher.AEAD
}

// OpenKeyFile reads path, creating it with a new key when it does not exist.
func OpenKeyFile(path string) (*KeyFile, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createKeyFile(path); err != nil {
			return nil, err
		}
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("read vault key file %s: %w", path, err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("vault key file %s is readable by others (mode %v); chmod 600 it", path, fi.Mode().Perm())
	}
	kf := &KeyFile{aeads: map[string]cipher.AEAD{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		id, b64, ok := strings.Cut(t, " ")
		key, derr := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
		if !ok || id == "" || derr != nil || len(key) != 32 {
			return nil, fmt.Errorf("vault key file %s:%d: want \"<key id> <base64 of 32 bytes>\"", path, line)
		}
		if _, dup := kf.aeads[id]; dup {
			return nil, fmt.Errorf("vault key file %s:%d: key id %q twice", path, line, id)
		}
		a, err := NewAEAD(key)
		if err != nil {
			return nil, err
		}
		kf.aeads[id] = a
		if kf.current == "" {
			kf.current = id
		}
	}
	if kf.current == "" {
		return nil, fmt.Errorf("vault key file %s has no key", path)
	}
	return kf, nil
}

// NewAEAD returns the AEAD that seals vault values under a 32-byte key:
// AES-256-GCM with a random 96-bit nonce, which Seal puts before the
// ciphertext and Open takes from there. A KeyFile's values are that; a KMS
// envelope (pkg/aws/kmsseal) ends with it.
func NewAEAD(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCMWithRandomNonce(b)
}

// OpenAEAD opens sealed, sealed by a (from NewAEAD) with aad; the error
// says no more than that it does not open.
func OpenAEAD(a cipher.AEAD, sealed, aad []byte) ([]byte, error) {
	if len(sealed) < a.Overhead() {
		return nil, errors.New("sealed value is too short")
	}
	pt, err := a.Open(nil, nil, sealed, aad)
	if err != nil {
		return nil, errors.New("authentication failed")
	}
	return pt, nil
}

// NewKeyLine returns a key file line with a fresh random key.
func NewKeyLine() string {
	key := make([]byte, 32)
	rand.Read(key)
	sum := sha256.Sum256(key)
	return "k" + hex.EncodeToString(sum[:6]) + " " + base64.StdEncoding.EncodeToString(key) + "\n"
}

func createKeyFile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil // created by another process meanwhile
	}
	if err != nil {
		return fmt.Errorf("create vault key file %s: %w", path, err)
	}
	_, err = f.WriteString("# toolrag vault keys: \"<key id> <base64 key>\"; the first seals, all open. Keep secret.\n" + NewKeyLine())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("write vault key file %s: %w", path, err)
	}
	return nil
}

// CurrentKeyID is the id of the key new values are sealed with.
func (k *KeyFile) CurrentKeyID() string { return k.current }

// Seal implements Sealer: nonce || AES-256-GCM(plaintext, aad).
func (k *KeyFile) Seal(_ context.Context, plaintext, aad []byte) ([]byte, string, error) {
	return k.aeads[k.current].Seal(nil, nil, plaintext, aad), k.current, nil
}

// Open implements Sealer.
func (k *KeyFile) Open(_ context.Context, sealed []byte, keyID string, aad []byte) ([]byte, error) {
	a, ok := k.aeads[keyID]
	if !ok {
		return nil, fmt.Errorf("sealing key %q is not in the key file", keyID)
	}
	return OpenAEAD(a, sealed, aad)
}
