package indexpub

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func TestCatalogPrefetch(t *testing.T) {
	ctx := context.Background()
	tools, servers := copyFixture()
	kw := []byte("the keyword analysis")
	decode := func(b []byte) (string, error) {
		if !bytes.Equal(b, kw) {
			return "", errors.New("not the analysis")
		}
		return "decoded:" + string(b), nil
	}
	b := NewDirBucket(t.TempDir())
	if err := WriteCatalog(ctx, b, "p/", "ix1", tools, servers, kw); err != nil {
		t.Fatal(err)
	}
	want, wantETag, _, err := ReadCatalog(ctx, b, "p/", "ix1", "")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("the copy of the index asked for, once", func(t *testing.T) {
		p := PrefetchCatalog(ctx, b, "p/", decode)
		c, etag, err := p.Catalog(ctx, "ix1")
		if err != nil || etag != wantETag || mustJSON(t, c) != mustJSON(t, want) {
			t.Fatalf("Catalog: etag %q err %v; want the copy ReadCatalog reads", etag, err)
		}
		got, err := p.Keywords(ctx, c.KeywordsSHA256)
		if err != nil || got != "decoded:"+string(kw) {
			t.Fatalf("Keywords: %q, %v", got, err)
		}
		if _, _, err := p.Catalog(ctx, "ix1"); !errors.Is(err, ErrNoPrefetch) {
			t.Fatalf("second Catalog: %v, want ErrNoPrefetch", err)
		}
	})
	t.Run("another index's copy", func(t *testing.T) {
		p := PrefetchCatalog(ctx, b, "p/", decode)
		if _, _, err := p.Catalog(ctx, "ix2"); !errors.Is(err, ErrNoPrefetch) || !strings.Contains(err.Error(), "ix1") {
			t.Fatalf("Catalog for another index: %v", err)
		}
		if _, err := p.Keywords(ctx, "other"); !errors.Is(err, ErrNoPrefetch) {
			t.Fatalf("Keywords of another analysis: %v", err)
		}
	})
	t.Run("no copy", func(t *testing.T) {
		p := PrefetchCatalog(ctx, b, "none/", decode)
		if _, _, err := p.Catalog(ctx, "ix1"); !errors.Is(err, ErrNotExist) {
			t.Fatalf("Catalog without a copy: %v", err)
		}
		if _, err := p.Keywords(ctx, ""); err == nil {
			t.Fatal("Keywords without a copy: no error")
		}
	})
	t.Run("released before or after the reads end", func(t *testing.T) {
		for _, early := range []bool{true, false} {
			p := PrefetchCatalog(ctx, b, "p/", decode)
			if early {
				p.Release()
			}
			<-p.done
			<-p.kwDone
			if !early {
				p.Release()
			}
			p.mu.Lock()
			held := len(p.c.Tools) != 0 || p.kw != ""
			p.mu.Unlock()
			if held {
				t.Fatalf("released (early %v) prefetch still holds the copy or the analysis", early)
			}
			if _, _, err := p.Catalog(ctx, "ix1"); !errors.Is(err, ErrNoPrefetch) {
				t.Fatalf("Catalog after Release: %v", err)
			}
			if _, err := p.Keywords(ctx, want.KeywordsSHA256); !errors.Is(err, ErrNoPrefetch) {
				t.Fatalf("Keywords after Release: %v", err)
			}
		}
	})
	t.Run("damaged analysis", func(t *testing.T) {
		if _, err := b.Put(ctx, "p/"+KeywordsKey(want.KeywordsSHA256), gz([]byte("tampered")), Cond{}); err != nil {
			t.Fatal(err)
		}
		p := PrefetchCatalog(ctx, b, "p/", decode)
		if _, _, err := p.Catalog(ctx, "ix1"); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Keywords(ctx, want.KeywordsSHA256); err == nil || errors.Is(err, ErrNoPrefetch) {
			t.Fatalf("Keywords of a damaged analysis: %v", err)
		}
	})
	t.Run("damaged copy", func(t *testing.T) {
		if _, err := b.Put(ctx, "p/"+CatalogKey, []byte("\x1f\x8b garbage"), Cond{}); err != nil {
			t.Fatal(err)
		}
		p := PrefetchCatalog(ctx, b, "p/", decode)
		if _, _, err := p.Catalog(ctx, "ix1"); err == nil || errors.Is(err, ErrNoPrefetch) || !strings.Contains(err.Error(), CatalogKey) {
			t.Fatalf("Catalog of a damaged copy: %v", err)
		}
	})
}
