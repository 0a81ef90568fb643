package indexpub

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestPrune(t *testing.T) {
	ctx := context.Background()
	b := NewDirBucket(t.TempDir())
	p := NewPublisher(b, "pfx/")
	var ptrs []Pointer
	for i := 1; i <= 5; i++ {
		ix, meta := build(t, i, 2)
		ptr, err := p.Publish(ctx, ix, meta)
		if err != nil {
			t.Fatal(err)
		}
		ptrs = append(ptrs, ptr)
	}
	// Within the grace period (default 10 minutes) nothing goes.
	if n, err := p.Prune(ctx, 1); err != nil || n != 0 {
		t.Fatalf("Prune within grace = %d, %v", n, err)
	}
	// Distinct modification times in the past, oldest first.
	for i, ptr := range ptrs {
		mt := time.Now().Add(time.Duration(i-10) * time.Hour)
		for _, k := range []string{ptr.Index, ptr.Meta} {
			os.Chtimes(filepath.Join(b.Dir(), "pfx", filepath.FromSlash(k)), mt, mt)
		}
	}
	p.PruneGrace = time.Minute
	n, err := p.Prune(ctx, 2)
	if err != nil || n != 3 {
		t.Fatalf("Prune(2) = %d, %v; want 3 removed", n, err)
	}
	objs, _ := b.List(ctx, "pfx/indexes/")
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	want := []string{"pfx/" + ptrs[4].Index, "pfx/" + ptrs[4].Meta, "pfx/" + ptrs[3].Index, "pfx/" + ptrs[3].Meta}
	slices.Sort(keys)
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Fatalf("after Prune: %v, want %v", keys, want)
	}
	if _, _, err := NewLoader(b, "pfx/").Load(ctx); err != nil {
		t.Fatalf("Load after Prune: %v", err)
	}
	if _, err := NewPublisher(struct{ Bucket }{b}, "").Prune(ctx, 1); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Prune on a bucket without List: %v", err)
	}
}

func TestPruneKeepsCurrentEvenIfOldest(t *testing.T) {
	ctx := context.Background()
	b := NewDirBucket(t.TempDir())
	p := NewPublisher(b, "")
	p.PruneGrace = time.Minute
	var ptrs []Pointer
	for i := 1; i <= 3; i++ {
		ix, meta := build(t, i, 2)
		ptr, _ := p.Publish(ctx, ix, meta)
		ptrs = append(ptrs, ptr)
		mt := time.Now().Add(time.Duration(i-10) * time.Hour)
		os.Chtimes(filepath.Join(b.Dir(), filepath.FromSlash(ptr.Index)), mt, mt)
		os.Chtimes(filepath.Join(b.Dir(), filepath.FromSlash(ptr.Meta)), mt, mt)
	}
	// Roll the pointer back by hand to the oldest build.
	body, _ := json.Marshal(ptrs[0])
	os.WriteFile(filepath.Join(b.Dir(), PointerKey), body, 0o644)
	if n, err := p.Prune(ctx, 1); err != nil || n != 2 {
		t.Fatalf("Prune(1) = %d, %v; want 2", n, err)
	}
	ix, meta, err := NewLoader(b, "").Load(ctx)
	if err != nil || checkBuild(t, ix, meta) != 1 {
		t.Fatalf("Load after Prune: %v", err)
	}
}
