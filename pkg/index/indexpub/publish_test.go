package indexpub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// build returns an index of n tools whose vectors all encode the build
// number, so a reader can tell whether an index and meta belong together.
func build(t testing.TB, number, n int) (*vindex.Index, vindex.Meta) {
	t.Helper()
	ix := vindex.New(4)
	meta := vindex.Meta{ModelID: "test-model", BuiltAt: t0.Add(time.Duration(number) * time.Second), Hashes: map[string]string{}}
	for i := range n {
		tool := fmt.Sprintf("srv__tool_%d", i)
		key, err := meta.Assign(tool)
		if err != nil {
			t.Fatal(err)
		}
		b := float32(number)
		norm := float32(math.Sqrt(float64(b*b + 1 + float32(i*i))))
		if err := ix.Upsert(key, []float32{b / norm, 1 / norm, float32(i) / norm, 0}); err != nil {
			t.Fatal(err)
		}
		meta.Hashes[tool] = fmt.Sprintf("build-%d", number)
	}
	return ix, meta
}

// checkBuild verifies that ix and meta are a complete pair of one build and
// returns its number.
func checkBuild(t testing.TB, ix *vindex.Index, meta vindex.Meta) int {
	t.Helper()
	number := int(meta.BuiltAt.Sub(t0) / time.Second)
	if err := meta.Check(ix); err != nil {
		t.Errorf("meta of build %d does not describe the index: %v", number, err)
	}
	for _, id := range ix.IDs() {
		v, _ := ix.Vector(id)
		if got := int(math.Round(float64(v[0] / v[1]))); got != number {
			t.Errorf("index vector from build %d paired with meta of build %d", got, number)
			break
		}
		tool, _ := meta.ToolID(id)
		if meta.Hashes[tool] != fmt.Sprintf("build-%d", number) {
			t.Errorf("meta hashes of another build: %q", meta.Hashes[tool])
			break
		}
	}
	return number
}

func TestPublishLoadRoundTrip(t *testing.T) {
	ctx := context.Background()
	b := NewDirBucket(t.TempDir())
	p := NewPublisher(b, "prod/")
	ix, meta := build(t, 1, 5)
	ptr, err := p.Publish(ctx, ix, meta)
	if err != nil {
		t.Fatal(err)
	}
	if ptr.Count != 5 || ptr.Dim != 4 || ptr.ModelID != "test-model" || !ptr.BuiltAt.Equal(meta.BuiltAt) ||
		ptr.Index != "indexes/"+ptr.SHA256+".faiss" || ptr.Meta != "indexes/"+ptr.SHA256+".json" {
		t.Fatalf("pointer = %+v", ptr)
	}
	for _, k := range []string{"prod/current.json", "prod/" + ptr.Index, "prod/" + ptr.Meta} {
		if _, err := os.Stat(filepath.Join(b.Dir(), k)); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	var onDisk Pointer
	raw, _ := os.ReadFile(filepath.Join(b.Dir(), "prod", "current.json"))
	if err := json.Unmarshal(raw, &onDisk); err != nil || onDisk != ptr {
		t.Fatalf("current.json = %s (%v), want %+v", raw, err, ptr)
	}

	l := NewLoader(b, "prod/")
	if _, ok := l.Pointer(); ok {
		t.Fatal("Pointer before Load reports an index")
	}
	got, gotMeta, err := l.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.IDs(), ix.IDs()) || checkBuild(t, got, gotMeta) != 1 {
		t.Fatalf("loaded ids %v, want %v", got.IDs(), ix.IDs())
	}
	if gotMeta.IndexSHA256 != ptr.SHA256 || gotMeta.Count != 5 || gotMeta.Dim != 4 || gotMeta.ModelID != "test-model" {
		t.Fatalf("loaded meta %+v", gotMeta)
	}
	if lp, ok := l.Pointer(); !ok || lp != ptr {
		t.Fatalf("Loader.Pointer = %+v %v", lp, ok)
	}
	// Publishing the same build again is a no-op.
	again, err := p.Publish(ctx, ix, meta)
	if err != nil || again != ptr {
		t.Fatalf("republishing: %+v %v", again, err)
	}
	// Another prefix in the same bucket is independent.
	if _, _, err := NewLoader(b, "staging/").Load(ctx); !errors.Is(err, ErrNotExist) {
		t.Fatalf("Load of an empty prefix: %v", err)
	}
}

func TestPublishRejectsBadInput(t *testing.T) {
	ix, meta := build(t, 1, 3)
	noModel := meta
	noModel.ModelID = ""
	missing := meta
	missing.IDs = map[string]string{"1": "x"}
	tests := []struct {
		name string
		ix   *vindex.Index
		meta vindex.Meta
		want string
	}{
		{"nil index", nil, meta, "no index"},
		{"no model", ix, noModel, "ModelID is empty"},
		{"ids not mapped", ix, missing, "meta does not describe the index"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := NewDirBucket(t.TempDir())
			_, err := NewPublisher(b, "").Publish(context.Background(), tc.ix, tc.meta)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Publish: %v, want %q", err, tc.want)
			}
			if objs, _ := b.List(context.Background(), ""); len(objs) != 0 {
				t.Fatalf("rejected Publish wrote %v", objs)
			}
		})
	}
}

func TestPublishDefaultsBuiltAt(t *testing.T) {
	b := NewDirBucket(t.TempDir())
	p := NewPublisher(b, "")
	p.Now = func() time.Time { return t0.Add(time.Hour).In(time.FixedZone("X", 3600)) }
	ix, meta := build(t, 1, 2)
	meta.BuiltAt = time.Time{}
	ptr, err := p.Publish(context.Background(), ix, meta)
	if err != nil || !ptr.BuiltAt.Equal(t0.Add(time.Hour)) || ptr.BuiltAt.Location() != time.UTC {
		t.Fatalf("BuiltAt = %v (%v), want %v in UTC", ptr.BuiltAt, err, t0.Add(time.Hour))
	}
}

func TestNeverPublishOlderOverNewer(t *testing.T) {
	ctx := context.Background()
	b := NewDirBucket(t.TempDir())
	p := NewPublisher(b, "")
	newIx, newMeta := build(t, 5, 3)
	oldIx, oldMeta := build(t, 2, 3)
	want, err := p.Publish(ctx, newIx, newMeta)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := p.Publish(ctx, oldIx, oldMeta)
	if !errors.Is(err, ErrStale) || cur != want {
		t.Fatalf("publishing an older build: %+v, %v; want ErrStale and the current pointer", cur, err)
	}
	ix, meta, err := NewLoader(b, "").Load(ctx)
	if err != nil || checkBuild(t, ix, meta) != 5 {
		t.Fatalf("after a stale publish the current build is %v (%v), want 5", meta.BuiltAt, err)
	}
}

func TestRefresh(t *testing.T) {
	ctx := context.Background()
	b := &countingBucket{Bucket: NewDirBucket(t.TempDir())}
	p := NewPublisher(b, "x/")
	l := NewLoader(b, "x/")
	if _, _, changed, err := l.Refresh(ctx); !errors.Is(err, ErrNotExist) || changed {
		t.Fatalf("Refresh with nothing published: changed %v, %v", changed, err)
	}
	ix1, meta1 := build(t, 1, 4)
	if _, err := p.Publish(ctx, ix1, meta1); err != nil {
		t.Fatal(err)
	}
	first, _, changed, err := l.Refresh(ctx)
	if err != nil || !changed || first.Len() != 4 {
		t.Fatalf("first Refresh: changed %v, %v", changed, err)
	}
	b.reset()
	again, _, changed, err := l.Refresh(ctx)
	if err != nil || changed || again != first {
		t.Fatalf("unchanged Refresh: changed %v, same index %v, %v", changed, again == first, err)
	}
	if b.gets != 1 || b.bytes != 0 {
		t.Fatalf("unchanged Refresh made %d reads of %d bytes, want one conditional read of nothing", b.gets, b.bytes)
	}

	ix2, meta2 := build(t, 2, 6)
	if _, err := p.Publish(ctx, ix2, meta2); err != nil {
		t.Fatal(err)
	}
	second, meta, changed, err := l.Refresh(ctx)
	if err != nil || !changed || second.Len() != 6 || checkBuild(t, second, meta) != 2 {
		t.Fatalf("Refresh after a publish: changed %v, %d vectors, %v", changed, second.Len(), err)
	}
	// A rewritten pointer naming the same index is not a change.
	ptrBody, etag, _ := b.Get(ctx, "x/current.json", "")
	var ptr Pointer
	json.Unmarshal(ptrBody, &ptr)
	ptr.ModelID = "renamed"
	body, _ := json.Marshal(ptr)
	if _, err := b.Put(ctx, "x/current.json", body, Cond{IfMatch: etag}); err != nil {
		t.Fatal(err)
	}
	third, _, changed, err := l.Refresh(ctx)
	if err != nil || changed || third != second {
		t.Fatalf("Refresh after a pointer rewrite: changed %v, %v", changed, err)
	}
}

// countingBucket counts reads and the bytes they return.
type countingBucket struct {
	Bucket
	mu          sync.Mutex
	gets, bytes int
}

func (c *countingBucket) Get(ctx context.Context, key, ifNoneMatch string) ([]byte, string, error) {
	body, etag, err := c.Bucket.Get(ctx, key, ifNoneMatch)
	c.mu.Lock()
	c.gets++
	c.bytes += len(body)
	c.mu.Unlock()
	return body, etag, err
}

func (c *countingBucket) reset() {
	c.mu.Lock()
	c.gets, c.bytes = 0, 0
	c.mu.Unlock()
}

func TestLoadErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		damage  func(t *testing.T, dir string, ptr Pointer)
		wantErr error
		msg     string
	}{
		{"missing pointer", func(t *testing.T, dir string, _ Pointer) {
			os.Remove(filepath.Join(dir, "current.json"))
		}, ErrNotExist, "no index is published"},
		{"pointer not JSON", func(t *testing.T, dir string, _ Pointer) {
			os.WriteFile(filepath.Join(dir, "current.json"), []byte("{nope"), 0o644)
		}, vindex.ErrCorrupt, "not valid JSON"},
		{"pointer without keys", func(t *testing.T, dir string, _ Pointer) {
			os.WriteFile(filepath.Join(dir, "current.json"), []byte("{}"), 0o644)
		}, vindex.ErrCorrupt, "lacks index"},
		{"index blob flipped byte", func(t *testing.T, dir string, ptr Pointer) {
			p := filepath.Join(dir, filepath.FromSlash(ptr.Index))
			b, _ := os.ReadFile(p)
			b[len(b)-1] ^= 1
			os.WriteFile(p, b, 0o644)
		}, vindex.ErrCorrupt, "has SHA-256"},
		{"index blob truncated", func(t *testing.T, dir string, ptr Pointer) {
			p := filepath.Join(dir, filepath.FromSlash(ptr.Index))
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o644)
		}, vindex.ErrCorrupt, "damaged or partial upload"},
		{"index blob missing", func(t *testing.T, dir string, ptr Pointer) {
			os.Remove(filepath.Join(dir, filepath.FromSlash(ptr.Index)))
		}, ErrNotExist, "reading index indexes/"},
		{"meta not JSON", func(t *testing.T, dir string, ptr Pointer) {
			os.WriteFile(filepath.Join(dir, filepath.FromSlash(ptr.Meta)), []byte("["), 0o644)
		}, vindex.ErrCorrupt, "meta"},
		{"meta of another index", func(t *testing.T, dir string, ptr Pointer) {
			p := filepath.Join(dir, filepath.FromSlash(ptr.Meta))
			var m vindex.Meta
			b, _ := os.ReadFile(p)
			json.Unmarshal(b, &m)
			m.IndexSHA256 = strings.Repeat("0", 64)
			b, _ = json.Marshal(m)
			os.WriteFile(p, b, 0o644)
		}, vindex.ErrCorrupt, "is for index 0000"},
		{"meta not matching index", func(t *testing.T, dir string, ptr Pointer) {
			p := filepath.Join(dir, filepath.FromSlash(ptr.Meta))
			var m vindex.Meta
			b, _ := os.ReadFile(p)
			json.Unmarshal(b, &m)
			m.Count = 99
			b, _ = json.Marshal(m)
			os.WriteFile(p, b, 0o644)
		}, vindex.ErrCorrupt, "does not match"},
		{"valid blob with the pointer's hash but not an index", func(t *testing.T, dir string, ptr Pointer) {
			junk := []byte("not an index at all")
			sha := ETag(junk)
			os.WriteFile(filepath.Join(dir, "indexes", sha+".faiss"), junk, 0o644)
			mb, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(ptr.Meta)))
			var m vindex.Meta
			json.Unmarshal(mb, &m)
			m.IndexSHA256 = sha
			mb, _ = json.Marshal(m)
			os.WriteFile(filepath.Join(dir, "indexes", sha+".json"), mb, 0o644)
			ptr.Index, ptr.Meta, ptr.SHA256 = "indexes/"+sha+".faiss", "indexes/"+sha+".json", sha
			pb, _ := json.Marshal(ptr)
			os.WriteFile(filepath.Join(dir, "current.json"), pb, 0o644)
		}, vindex.ErrCorrupt, "decoding index"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			b := NewDirBucket(dir)
			ix, meta := build(t, 1, 3)
			ptr, err := NewPublisher(b, "").Publish(ctx, ix, meta)
			if err != nil {
				t.Fatal(err)
			}
			tc.damage(t, dir, ptr)
			got, _, err := NewLoader(b, "").Load(ctx)
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.msg) || got != nil {
				t.Fatalf("Load: %v, want %v mentioning %q", err, tc.wantErr, tc.msg)
			}
		})
	}
}

// TestRefreshKeepsOldIndexOnError: a damaged new publication is reported and
// the loader stays on the index it had.
func TestRefreshKeepsOldIndexOnError(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b := NewDirBucket(dir)
	p := NewPublisher(b, "")
	l := NewLoader(b, "")
	ix1, meta1 := build(t, 1, 3)
	p.Publish(ctx, ix1, meta1)
	first, _, err := l.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ix2, meta2 := build(t, 2, 3)
	ptr2, _ := p.Publish(ctx, ix2, meta2)
	os.WriteFile(filepath.Join(dir, filepath.FromSlash(ptr2.Index)), []byte("garbage"), 0o644)
	if _, _, _, err := l.Refresh(ctx); !errors.Is(err, vindex.ErrCorrupt) {
		t.Fatalf("Refresh of a damaged publication: %v", err)
	}
	if lp, _ := l.Pointer(); lp.SHA256 == ptr2.SHA256 {
		t.Fatal("loader moved to the damaged index")
	}
	// Republishing repairs the blob (content-addressed, unconditional put).
	ix2b, meta2b := build(t, 3, 3)
	p.Publish(ctx, ix2b, meta2b)
	got, meta, changed, err := l.Refresh(ctx)
	if err != nil || !changed || got == first || checkBuild(t, got, meta) != 3 {
		t.Fatalf("Refresh after a good publish: changed %v, %v", changed, err)
	}
}

// TestCrashBeforeSwitchKeepsOldIndex: blobs uploaded without the pointer
// switch (a publisher that died in between) are invisible to readers.
func TestCrashBeforeSwitchKeepsOldIndex(t *testing.T) {
	ctx := context.Background()
	b := NewDirBucket(t.TempDir())
	p := NewPublisher(b, "")
	ix1, meta1 := build(t, 1, 3)
	want, err := p.Publish(ctx, ix1, meta1)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLoader(b, "")
	if _, _, err := l.Load(ctx); err != nil {
		t.Fatal(err)
	}
	ix2, meta2 := build(t, 2, 8)
	orphan, err := uploadOnly(ctx, p, ix2, meta2) // ... and the process dies here
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(b.Dir(), filepath.FromSlash(orphan.Index))); err != nil {
		t.Fatalf("upload did not write the blob: %v", err)
	}
	ix, meta, changed, err := l.Refresh(ctx)
	if err != nil || changed || checkBuild(t, ix, meta) != 1 {
		t.Fatalf("Refresh after a crashed publish: changed %v, %v", changed, err)
	}
	ix, meta, err = NewLoader(b, "").Load(ctx)
	if err != nil || meta.IndexSHA256 != want.SHA256 || checkBuild(t, ix, meta) != 1 {
		t.Fatalf("fresh Load after a crashed publish: %v", err)
	}
}

// racingBucket runs a hook before the first pointer Put of a publisher,
// simulating another publisher switching the pointer in between.
type racingBucket struct {
	Bucket
	hook  func()
	times int // how many pointer Puts get the hook
}

func (r *racingBucket) Put(ctx context.Context, key string, body []byte, cond Cond) (string, error) {
	if strings.HasSuffix(key, PointerKey) && r.times > 0 {
		r.times--
		r.hook()
	}
	return r.Bucket.Put(ctx, key, body, cond)
}

func TestPublishRetriesWhenPointerMoves(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		mine      int // build number this publisher publishes
		rival     int // build number the rival publishes in between
		existing  bool
		wantErr   error
		wantBuild int
	}{
		{"newer than rival, create race", 5, 3, false, nil, 5},
		{"newer than rival, update race", 5, 3, true, nil, 5},
		{"older than rival", 2, 4, true, ErrStale, 4},
		{"older than rival, create race", 2, 4, false, ErrStale, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := NewDirBucket(t.TempDir())
			if tc.existing {
				ix, meta := build(t, 1, 2)
				if _, err := NewPublisher(dir, "").Publish(ctx, ix, meta); err != nil {
					t.Fatal(err)
				}
			}
			rb := &racingBucket{Bucket: dir, times: 1}
			rb.hook = func() {
				ix, meta := build(t, tc.rival, 3)
				if _, err := NewPublisher(dir, "").Publish(ctx, ix, meta); err != nil {
					t.Errorf("rival publish: %v", err)
				}
			}
			ix, meta := build(t, tc.mine, 2)
			_, err := NewPublisher(rb, "").Publish(ctx, ix, meta)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Publish: %v, want %v", err, tc.wantErr)
			}
			gotIx, gotMeta, err := NewLoader(dir, "").Load(ctx)
			if err != nil || checkBuild(t, gotIx, gotMeta) != tc.wantBuild {
				t.Fatalf("current build %v (%v), want %d", gotMeta.BuiltAt, err, tc.wantBuild)
			}
		})
	}
}

func TestPublishGivesUp(t *testing.T) {
	ctx := context.Background()
	dir := NewDirBucket(t.TempDir())
	n := 10
	rb := &racingBucket{Bucket: dir, times: 1000}
	rb.hook = func() { // a rival publishes a newer build, still older than ours, every time
		n++
		ix, meta := build(t, n, 2)
		meta.BuiltAt = t0.Add(time.Duration(n) * time.Millisecond)
		NewPublisher(dir, "").Publish(ctx, ix, meta)
	}
	p := NewPublisher(rb, "")
	p.MaxAttempts = 3
	ix, meta := build(t, 1, 2)
	_, err := p.Publish(ctx, ix, meta)
	if err == nil || !strings.Contains(err.Error(), "changed under each of 3 attempts") {
		t.Fatalf("Publish: %v", err)
	}
}

// TestConcurrentPublishersAndReaders: two publishers race through
// interleaved builds while readers load and refresh; every load is a
// complete pair, and the newest build wins.
func TestConcurrentPublishersAndReaders(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := NewDirBucket(t.TempDir())
	const perPublisher = 12
	var pubs sync.WaitGroup
	for w := range 2 {
		pubs.Add(1)
		go func() {
			defer pubs.Done()
			p := NewPublisher(b, "")
			for i := range perPublisher {
				number := 2*i + w + 1 // publisher 0: 1,3,5...; publisher 1: 2,4,6...
				ix, meta := build(t, number, 3+number%5)
				if _, err := p.Publish(ctx, ix, meta); err != nil && !errors.Is(err, ErrStale) {
					t.Errorf("publisher %d build %d: %v", w, number, err)
				}
			}
		}()
	}
	var readers sync.WaitGroup
	loads := make([]int, 2)
	for r := range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			l := NewLoader(b, "")
			last := 0
			for ctx.Err() == nil {
				var (
					ix   *vindex.Index
					meta vindex.Meta
					err  error
				)
				if r == 0 {
					ix, meta, err = l.Load(ctx)
				} else {
					ix, meta, _, err = l.Refresh(ctx)
				}
				if errors.Is(err, ErrNotExist) && last == 0 {
					continue // nothing published yet
				}
				if err != nil {
					if ctx.Err() == nil {
						t.Errorf("reader %d: %v", r, err)
					}
					return
				}
				n := checkBuild(t, ix, meta)
				if n < last {
					t.Errorf("reader %d went back from build %d to %d", r, last, n)
				}
				last = n
				loads[r]++
			}
		}()
	}
	pubs.Wait()
	cancel()
	readers.Wait()
	ix, meta, err := NewLoader(b, "").Load(context.Background())
	if err != nil || checkBuild(t, ix, meta) != 2*perPublisher {
		t.Fatalf("final build %v (%v), want %d", meta.BuiltAt, err, 2*perPublisher)
	}
	if loads[0] == 0 || loads[1] == 0 {
		t.Fatalf("readers loaded %v times", loads)
	}
}

// vanishingBucket publishes a new build and deletes the blobs of the old one
// right when a reader first asks for an index blob, as a publisher followed
// by Prune could.
type vanishingBucket struct {
	*DirBucket
	t    *testing.T
	once sync.Once
}

func (v *vanishingBucket) Get(ctx context.Context, key, ifNoneMatch string) ([]byte, string, error) {
	if strings.HasSuffix(key, ".faiss") {
		v.once.Do(func() {
			old, _, _ := v.DirBucket.Get(ctx, PointerKey, "")
			var ptr Pointer
			json.Unmarshal(old, &ptr)
			ix, meta := build(v.t, 9, 4)
			if _, err := NewPublisher(v.DirBucket, "").Publish(ctx, ix, meta); err != nil {
				v.t.Error(err)
			}
			v.DirBucket.Delete(ctx, ptr.Index)
			v.DirBucket.Delete(ctx, ptr.Meta)
		})
	}
	return v.DirBucket.Get(ctx, key, ifNoneMatch)
}

func TestLoadFollowsPointerWhenBlobVanishes(t *testing.T) {
	ctx := context.Background()
	dir := NewDirBucket(t.TempDir())
	ix, meta := build(t, 1, 2)
	if _, err := NewPublisher(dir, "").Publish(ctx, ix, meta); err != nil {
		t.Fatal(err)
	}
	got, gotMeta, err := NewLoader(&vanishingBucket{DirBucket: dir, t: t}, "").Load(ctx)
	if err != nil || checkBuild(t, got, gotMeta) != 9 {
		t.Fatalf("Load = build %v, %v; want build 9", gotMeta.BuiltAt, err)
	}
}

// TestBeforeSwitch: the hook runs once, with the pointer about to become
// current, while readers still see the previous one; its error stops the
// publish; it does not run for a build older than the current one.
func TestBeforeSwitch(t *testing.T) {
	ctx := context.Background()
	b := NewDirBucket(t.TempDir())
	p := NewPublisher(b, "")
	if _, err := ReadPointer(ctx, b, ""); !errors.Is(err, ErrNotExist) {
		t.Fatalf("ReadPointer with nothing published: %v, want ErrNotExist", err)
	}
	ix1, meta1 := build(t, 1, 2)
	if _, err := p.Publish(ctx, ix1, meta1); err != nil {
		t.Fatal(err)
	}
	var calls []Pointer
	p.BeforeSwitch = func(ctx context.Context, next Pointer) error {
		calls = append(calls, next)
		// Readers still get build 1.
		ix, meta, err := NewLoader(b, "").Load(ctx)
		if err != nil || checkBuild(t, ix, meta) != 1 {
			t.Errorf("inside BeforeSwitch the current build is %v (%v), want 1", meta.BuiltAt, err)
		}
		// What the hook writes is there once the pointer switches.
		_, err = b.Put(ctx, "extra/"+next.SHA256, []byte("x"), Cond{})
		return err
	}
	ix2, meta2 := build(t, 2, 2)
	got, err := p.Publish(ctx, ix2, meta2)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || calls[0] != got {
		t.Fatalf("BeforeSwitch calls %+v, want one with %+v", calls, got)
	}
	if ptr, err := ReadPointer(ctx, b, ""); err != nil || ptr != got {
		t.Fatalf("ReadPointer = %+v, %v; want %+v", ptr, err, got)
	}
	if _, _, err := b.Get(ctx, "extra/"+got.SHA256, ""); err != nil {
		t.Fatalf("what BeforeSwitch wrote: %v", err)
	}

	calls = nil
	ix0, meta0 := build(t, 0, 2)
	if _, err := p.Publish(ctx, ix0, meta0); !errors.Is(err, ErrStale) || len(calls) != 0 {
		t.Fatalf("older build: err %v, %d BeforeSwitch calls; want ErrStale and none", err, len(calls))
	}

	p.BeforeSwitch = func(context.Context, Pointer) error { return errors.New("catalog copy failed") }
	ix3, meta3 := build(t, 3, 2)
	if _, err := p.Publish(ctx, ix3, meta3); err == nil || !strings.Contains(err.Error(), "catalog copy failed") {
		t.Fatalf("failing BeforeSwitch: %v, want its error", err)
	}
	ix, meta, err := NewLoader(b, "").Load(ctx)
	if err != nil || checkBuild(t, ix, meta) != 2 {
		t.Fatalf("after a failed BeforeSwitch the current build is %v (%v), want 2", meta.BuiltAt, err)
	}
}

// plainBucket hides DirBucket's PutReader: the publisher encodes the index
// into a buffer instead.
type plainBucket struct{ Bucket }

// TestPublishWithAndWithoutReaderPutter: streaming the index from memory
// and encoding it into a buffer publish the same bytes.
func TestPublishWithAndWithoutReaderPutter(t *testing.T) {
	ctx := context.Background()
	ix, meta := build(t, 3, 50)
	streamed := NewDirBucket(t.TempDir())
	buffered := NewDirBucket(t.TempDir())
	a, err := NewPublisher(streamed, "p/").Publish(ctx, ix, meta)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewPublisher(plainBucket{buffered}, "p/").Publish(ctx, ix, meta)
	if err != nil {
		t.Fatal(err)
	}
	if a.SHA256 != b.SHA256 {
		t.Fatalf("streamed %s, buffered %s", a.SHA256, b.SHA256)
	}
	for _, bk := range []Bucket{streamed, buffered} {
		got, gotMeta, err := NewLoader(bk, "p/").Load(ctx)
		if err != nil || checkBuild(t, got, gotMeta) != 3 {
			t.Fatalf("load: %v", err)
		}
	}
}

// putCounter counts Puts by key.
type putCounter struct {
	Bucket
	mu   sync.Mutex
	puts map[string]int
}

func (c *putCounter) Put(ctx context.Context, key string, body []byte, cond Cond) (string, error) {
	c.mu.Lock()
	if c.puts == nil {
		c.puts = map[string]int{}
	}
	c.puts[key]++
	c.mu.Unlock()
	return c.Bucket.Put(ctx, key, body, cond)
}

func (c *putCounter) Head(ctx context.Context, key string) (ObjectInfo, error) {
	return c.Bucket.(Header).Head(ctx, key)
}
func (c *putCounter) ETagOf(body []byte) string { return c.Bucket.(Header).ETagOf(body) }

func (c *putCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.puts {
		n += v
	}
	return n
}

// TestRepublishSameContentWritesNothing: publishing a rebuild of the same
// content (same vectors, same meta, a later BuiltAt) writes no blob and no
// pointer, and returns the current pointer; a reader's Refresh reports no
// change. A meta change alone (same vectors) does switch the pointer, and
// an index blob that is already stored (a return to an earlier build) is
// not uploaded again.
func TestRepublishSameContentWritesNothing(t *testing.T) {
	ctx := context.Background()
	b := &putCounter{Bucket: NewDirBucket(t.TempDir())}
	p := NewPublisher(b, "")
	ix, meta := build(t, 1, 5)
	first, err := p.Publish(ctx, ix, meta)
	if err != nil || b.total() != 3 {
		t.Fatalf("first publish: %v, %d puts (want index, meta, pointer)", err, b.total())
	}
	l := NewLoader(b, "")
	if _, _, err := l.Load(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		again, meta := build(t, 1, 5)
		meta.BuiltAt = meta.BuiltAt.Add(time.Duration(i+1) * time.Hour) // a later rebuild
		got, err := p.Publish(ctx, again, meta)
		if err != nil || got != first {
			t.Fatalf("republish %d: %+v %v; want the current pointer %+v", i, got, err, first)
		}
		if _, _, changed, err := l.Refresh(ctx); err != nil || changed {
			t.Fatalf("republish %d: Refresh changed %v, %v", i, changed, err)
		}
	}
	if n := b.total(); n != 3 {
		t.Fatalf("republishing the same content made %d more puts: %v", n-3, b.puts)
	}

	// Same vectors, another document hash: the meta and the pointer are
	// written, the stored index blob is not.
	ix2, meta2 := build(t, 1, 5)
	meta2.Hashes["srv__tool_0"] = "build-1-edited"
	meta2.BuiltAt = meta2.BuiltAt.Add(time.Minute)
	second, err := p.Publish(ctx, ix2, meta2)
	if err != nil || second.SHA256 != first.SHA256 || second.MetaSHA256 == first.MetaSHA256 {
		t.Fatalf("meta-only change: %+v %v", second, err)
	}
	if b.puts[first.Index] != 1 || b.puts[first.Meta] != 2 || b.puts[PointerKey] != 2 {
		t.Fatalf("meta-only change: puts %v; want the meta and the pointer written again, not the index", b.puts)
	}

	// Back to the first build's content after another: its blob is there.
	ix3, meta3 := build(t, 3, 5)
	meta3.BuiltAt = t0.Add(2 * time.Minute)
	if _, err := p.Publish(ctx, ix3, meta3); err != nil {
		t.Fatal(err)
	}
	ix4, meta4 := build(t, 1, 5)
	meta4.BuiltAt = t0.Add(time.Hour)
	if _, err := p.Publish(ctx, ix4, meta4); err != nil {
		t.Fatal(err)
	}
	if b.puts[first.Index] != 1 {
		t.Fatalf("the stored index blob was uploaded %d times", b.puts[first.Index])
	}

	// A damaged (truncated) current blob is uploaded again by a publish
	// of the same content, and the pointer stays.
	cur, err := ReadPointer(ctx, b, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.Bucket.(*DirBucket).Dir(), filepath.FromSlash(cur.Index)), []byte("damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	ptrPuts := b.puts[PointerKey]
	ix5, meta5 := build(t, 1, 5)
	meta5.BuiltAt = t0.Add(2 * time.Hour)
	if got, err := p.Publish(ctx, ix5, meta5); err != nil || got != cur {
		t.Fatalf("republish over a damaged blob: %+v %v", got, err)
	}
	if b.puts[cur.Index] != 2 || b.puts[PointerKey] != ptrPuts {
		t.Fatalf("damaged blob: puts %v; want the index uploaded again and no pointer write", b.puts)
	}
	if _, _, err := NewLoader(b, "").Load(ctx); err != nil {
		t.Fatalf("after the repair: %v", err)
	}
}

// uploadOnly writes the index and meta blobs as Publish does and returns
// the pointer that would make them current, without switching to it (a
// process that dies before the switch).
func uploadOnly(ctx context.Context, p *Publisher, ix *vindex.Index, meta vindex.Meta) (Pointer, error) {
	prep, err := p.prepare(ctx, ix, meta)
	if err != nil {
		return Pointer{}, err
	}
	return prep.ptr, p.store(ctx, prep)
}
