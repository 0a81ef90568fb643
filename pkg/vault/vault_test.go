package vault

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func newLocal(t *testing.T) (*Vault, *SQLite, string) {
	t.Helper()
	dir := t.TempDir()
	kf, err := OpenKeyFile(filepath.Join(dir, "vault.key"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := OpenSQLite(context.Background(), filepath.Join(dir, "grants.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rows.Close() })
	return New(rows, kf, time.Minute), rows, dir
}

func TestKeyFileCreatedPrivate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "vault.key")
	kf, err := OpenKeyFile(p)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	again, err := OpenKeyFile(p)
	if err != nil || again.CurrentKeyID() != kf.CurrentKeyID() {
		t.Fatalf("reopened key file: %v, id %q vs %q", err, again.CurrentKeyID(), kf.CurrentKeyID())
	}
	os.Chmod(p, 0o644)
	if _, err := OpenKeyFile(p); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a world-readable key file: %v", err)
	}
	bad := filepath.Join(dir, "bad.key")
	os.WriteFile(bad, []byte("k1 notbase64\n"), 0o600)
	if _, err := OpenKeyFile(bad); err == nil || !strings.Contains(err.Error(), "bad.key:1") {
		t.Errorf("a malformed key file: %v", err)
	}
}

func TestRotation(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "vault.key")
	old, err := OpenKeyFile(p)
	if err != nil {
		t.Fatal(err)
	}
	aad := Key{"p", "s"}.aad()
	sealed, kid, err := old.Seal(context.Background(), []byte("tok"), aad)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	os.WriteFile(p, append([]byte(NewKeyLine()), data...), 0o600)
	rotated, err := OpenKeyFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.CurrentKeyID() == kid {
		t.Fatal("the new first line did not become the current key")
	}
	pt, err := rotated.Open(context.Background(), sealed, kid, aad)
	if err != nil || string(pt) != "tok" {
		t.Fatalf("a value sealed under the old key: %q, %v", pt, err)
	}
}

func TestVaultSealedRows(t *testing.T) {
	ctx := context.Background()
	v, rows, _ := newLocal(t)
	alice := Key{Principal: "key:alice", Server: "gh"}
	bob := Key{Principal: "key:bob", Server: "gh"}
	tok := "gho_ALICE_ACCESS_TOKEN_1234567890"
	ref := "ghr_ALICE_REFRESH_0987654321"
	if err := v.Put(ctx, alice, Grant{Kind: KindOAuth, AccessToken: tok, RefreshToken: ref, Expiry: time.Now().Add(time.Hour), KeyID: "alice"}); err != nil {
		t.Fatal(err)
	}
	g, err := v.Get(ctx, alice)
	if err != nil || g.AccessToken != tok || g.RefreshToken != ref || g.KeyID != "alice" {
		t.Fatalf("get = %v %v", g, err)
	}
	if _, err := v.Get(ctx, bob); !errors.Is(err, ErrNotFound) {
		t.Errorf("bob's grant: %v, want ErrNotFound", err)
	}

	// The raw row holds none of the token bytes.
	all, err := rows.ListRows(ctx, "")
	if err != nil || len(all) != 1 {
		t.Fatalf("rows: %v %v", all, err)
	}
	raw := all[0]
	for _, secret := range []string{tok, ref, "ALICE_ACCESS", "ALICE_REFRESH"} {
		if bytes.Contains(raw.Sealed, []byte(secret)) {
			t.Errorf("the sealed row contains %q", secret)
		}
	}

	// A row copied to another principal (or server) does not open.
	for _, k := range []Key{bob, {Principal: "key:alice", Server: "other"}} {
		moved := raw
		moved.Principal, moved.Server = k.Principal, k.Server
		if err := rows.PutRow(ctx, moved); err != nil {
			t.Fatal(err)
		}
		v.Forget(k)
		if g, err := v.Get(ctx, k); err == nil || strings.Contains(err.Error(), tok) {
			t.Errorf("a row copied to %v opened: %v %v", k, g, err)
		}
	}

	// Secrets never reach a log line or a formatted value.
	var logBuf bytes.Buffer
	slog.New(slog.NewTextHandler(&logBuf, nil)).Info("grant", "g", g)
	for _, s := range []string{fmt.Sprint(g), fmt.Sprintf("%v %+v %#v %s", g, g, g, g), logBuf.String()} {
		if strings.Contains(s, tok) || strings.Contains(s, ref) {
			t.Errorf("a secret was printed: %s", s)
		}
	}

	// Listing shows no secret; deleting ends the grant, also in the cache.
	infos, err := v.List(ctx, "key:alice")
	if err != nil || len(infos) != 2 {
		t.Fatalf("list = %v %v", infos, err)
	}
	for _, in := range infos {
		if err := v.Delete(ctx, Key{in.Principal, in.Server}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := v.Get(ctx, alice); !errors.Is(err, ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
}

func TestVaultCacheServesWarmCalls(t *testing.T) {
	ctx := context.Background()
	v, rows, _ := newLocal(t)
	k := Key{"key:a", "s"}
	if err := v.Put(ctx, k, Grant{Kind: KindSecret, Secret: "pat"}); err != nil {
		t.Fatal(err)
	}
	// Remove the row behind the cache's back: a warm Get does not read it.
	if err := rows.DeleteRow(ctx, k); err != nil {
		t.Fatal(err)
	}
	if g, err := v.Get(ctx, k); err != nil || g.Secret != "pat" {
		t.Fatalf("warm get = %v %v", g, err)
	}
	v.now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	if _, err := v.Get(ctx, k); !errors.Is(err, ErrNotFound) {
		t.Errorf("after the TTL the store is read again: %v", err)
	}
}

func BenchmarkVaultWarmGet(b *testing.B) {
	dir := b.TempDir()
	kf, _ := OpenKeyFile(filepath.Join(dir, "k"))
	rows, _ := OpenSQLite(context.Background(), filepath.Join(dir, "db"))
	defer rows.Close()
	v := New(rows, kf, time.Minute)
	k := Key{"key:a", "s"}
	v.Put(context.Background(), k, Grant{Kind: KindOAuth, AccessToken: "t"})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Get(context.Background(), k); err != nil {
			b.Fatal(err)
		}
	}
}

// TestKeyFileFormat: a KeyFile value is nonce (12 bytes) || AES-256-GCM,
// as stored before NewAEAD (values sealed then still open, and plain GCM
// opens what it seals now); a short or altered value does not open.
func TestKeyFileFormat(t *testing.T) {
	ctx := context.Background()
	key := bytes.Repeat([]byte{7}, 32)
	p := filepath.Join(t.TempDir(), "v.key")
	if err := os.WriteFile(p, []byte("k1 "+base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kf, err := OpenKeyFile(p)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := aes.NewCipher(key)
	gcm, _ := cipher.NewGCM(block)
	aad := []byte("grant")

	nonce := bytes.Repeat([]byte{1}, 12)
	before := gcm.Seal(append([]byte(nil), nonce...), nonce, []byte("old secret"), aad)
	if got, err := kf.Open(ctx, before, "k1", aad); err != nil || string(got) != "old secret" {
		t.Errorf("a value sealed as before: %q, %v", got, err)
	}

	sealed, id, err := kf.Seal(ctx, []byte("new secret"), aad)
	if err != nil || id != "k1" {
		t.Fatalf("seal: %v, key %q", err, id)
	}
	if got, err := gcm.Open(nil, sealed[:12], sealed[12:], aad); err != nil || string(got) != "new secret" {
		t.Errorf("plain GCM opening a new value: %q, %v", got, err)
	}

	for name, c := range map[string]struct {
		sealed []byte
		want   string
	}{
		"short":       {sealed[:27], "too short"},
		"altered":     {append(append([]byte(nil), sealed[:len(sealed)-1]...), sealed[len(sealed)-1]^1), "authentication failed"},
		"another aad": {sealed, "authentication failed"},
	} {
		a := aad
		if name == "another aad" {
			a = []byte("other")
		}
		if _, err := kf.Open(ctx, c.sealed, "k1", a); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", name, err, c.want)
		}
	}
}
