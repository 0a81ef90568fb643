package indexpub

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// A follower's reads of the catalog copy: the first with its keyword
// analysis (prefetched or not), the same copy again answered
// ErrNotModified, another index's copy ErrNotExist, and after Forget the
// copy again without the analysis.
func TestCopyReader(t *testing.T) {
	ctx := context.Background()
	tools, servers := copyFixture()
	kw := []byte("the keyword analysis")
	decodes := 0
	decode := func(b []byte) (string, error) {
		decodes++
		if !bytes.Equal(b, kw) {
			return "", errors.New("not the analysis")
		}
		return "decoded", nil
	}
	b := NewDirBucket(t.TempDir())
	if err := WriteCatalog(ctx, b, "p/", "ix1", tools, servers, kw); err != nil {
		t.Fatal(err)
	}
	for _, prefetch := range []bool{false, true} {
		decodes = 0
		r := &CopyReader[string]{Bucket: b, Prefix: "p/", Decode: decode}
		if prefetch {
			r.Prefetch(ctx)
		}
		c, k, ok, err := r.Read(ctx, "ix1")
		if err != nil || len(c.Tools) != len(tools) || k != "decoded" || !ok || decodes != 1 {
			t.Fatalf("prefetch=%v: first Read: %d tools, %q %v, %v (%d decodes)", prefetch, len(c.Tools), k, ok, err, decodes)
		}
		if _, _, _, err := r.Read(ctx, "ix1"); !errors.Is(err, ErrNotModified) {
			t.Errorf("prefetch=%v: the same copy again: %v, want ErrNotModified", prefetch, err)
		}
		if _, _, _, err := r.Read(ctx, "ix2"); !errors.Is(err, ErrNotExist) {
			t.Errorf("prefetch=%v: another index's copy: %v, want ErrNotExist", prefetch, err)
		}
		r.Forget()
		c, k, ok, err = r.Read(ctx, "ix1")
		if err != nil || len(c.Tools) != len(tools) || ok || k != "" || decodes != 1 {
			t.Errorf("prefetch=%v: after Forget: %d tools, %q %v, %v; want the copy without the analysis", prefetch, len(c.Tools), k, ok, err)
		}
		r.Release()
	}
}
