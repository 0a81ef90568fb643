package indexer_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

// memCatalog is a mutable in-memory catalog.
type memCatalog struct {
	mu      sync.Mutex
	tools   []catalog.Tool
	servers []catalog.Server
}

func (c *memCatalog) ListTools(context.Context) ([]catalog.Tool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]catalog.Tool(nil), c.tools...), nil
}

func (c *memCatalog) ListServers(context.Context) ([]catalog.Server, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]catalog.Server(nil), c.servers...), nil
}

func newCatalog(n int) *memCatalog {
	c := &memCatalog{servers: []catalog.Server{{ID: "s", Description: "test server"}}}
	for i := range n {
		t := catalog.Tool{Server: "s", Name: fmt.Sprintf("tool_%03d", i), Description: fmt.Sprintf("Tool number %d does thing %d.", i, i)}
		catalog.Finalize(&t)
		c.tools = append(c.tools, t)
	}
	return c
}

// counting wraps an embedder and counts embedded documents and calls.
type counting struct {
	embed.Embedder
	id    string
	docs  atomic.Int64
	calls atomic.Int64
	max   atomic.Int64
}

func (c *counting) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	c.docs.Add(int64(len(texts)))
	c.calls.Add(1)
	if int64(len(texts)) > c.max.Load() {
		c.max.Store(int64(len(texts)))
	}
	return c.Embedder.EmbedDocuments(ctx, texts)
}

func (c *counting) ModelID() string {
	if c.id != "" {
		return c.id
	}
	return c.Embedder.ModelID()
}

// dirPersister is a local directory to publish the index to, through
// indexpub.
func dirPersister(dir string) indexpub.Bucket { return indexpub.NewDirBucket(dir) }

func newIndexer(t *testing.T, c indexer.Catalog, e embed.Embedder, b indexpub.Bucket) *indexer.Indexer {
	t.Helper()
	x, err := indexer.New(indexer.Config{Catalog: c, Embedder: e, Bucket: b, Prefix: "idx/", BatchSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestFullBuildBatchesAndServes(t *testing.T) {
	c := newCatalog(50)
	e := &counting{Embedder: embed.NewBuiltin()}
	x := newIndexer(t, c, e, nil)
	if _, _, ok := x.Current(); ok {
		t.Fatal("Current before any build reports an index")
	}
	res, err := x.Build(context.Background(), indexer.ModeFull)
	if err != nil {
		t.Fatal(err)
	}
	if res.Tools != 50 || res.Embedded != 50 || res.Reused != 0 {
		t.Errorf("result = %+v", res)
	}
	if got := e.max.Load(); got > 16 {
		t.Errorf("largest embedding batch = %d, want ≤ 16", got)
	}
	if got := e.calls.Load(); got != 4 {
		t.Errorf("embed calls = %d, want 4 (50 tools in batches of 16)", got)
	}
	ix, meta, ok := x.Current()
	if !ok || ix.Len() != 50 || meta.Count != 50 || meta.ModelID != e.ModelID() || len(meta.Hashes) != 50 {
		t.Fatalf("current index: ok=%v len=%d meta=%+v", ok, ix.Len(), meta.Count)
	}
	if err := meta.Check(ix); err != nil {
		t.Error(err)
	}
	st := x.Stats()
	if st.ToolsInIndex != 50 || st.Builds != 1 || st.LastBuild.IsZero() || st.LastMode != indexer.ModeFull {
		t.Errorf("stats = %+v", st)
	}
}

func TestIncrementalReusesVectors(t *testing.T) {
	c := newCatalog(40)
	e := &counting{Embedder: embed.NewBuiltin()}
	x := newIndexer(t, c, e, nil)
	if _, err := x.Build(context.Background(), indexer.ModeFull); err != nil {
		t.Fatal(err)
	}
	before, _, _ := x.Current()
	// Change 2 tools, add 3, delete 5.
	c.mu.Lock()
	c.tools[0].Description = "Changed."
	catalog.Finalize(&c.tools[0])
	c.tools[1].Description = "Changed too."
	catalog.Finalize(&c.tools[1])
	c.tools = c.tools[:35]
	for i := range 3 {
		t := catalog.Tool{Server: "s", Name: fmt.Sprintf("new_%d", i), Description: "New tool."}
		catalog.Finalize(&t)
		c.tools = append(c.tools, t)
	}
	c.mu.Unlock()
	e.docs.Store(0)
	res, err := x.Build(context.Background(), indexer.ModeIncremental)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.docs.Load(); got != 5 {
		t.Errorf("incremental build embedded %d documents, want 5 (2 changed + 3 new)", got)
	}
	if res.Reused != 33 || res.Removed != 5 || res.Tools != 38 || res.Mode != indexer.ModeIncremental {
		t.Errorf("result = %+v", res)
	}
	after, meta, _ := x.Current()
	if after == before {
		t.Error("the incremental build modified the index readers hold instead of building a new one")
	}
	if before.Len() != 40 {
		t.Errorf("the previous index changed under its readers: %d vectors", before.Len())
	}
	if _, ok := meta.ToolID(vindex.ToolKey("s__tool_039")); ok {
		t.Error("a deleted tool is still in the meta")
	}
	// A reused vector is the one the previous build stored: the same
	// codes, except in dimensions whose 8-bit range the new tools widened,
	// where it moves by less than a step.
	if !after.Quantized() || !before.Quantized() {
		t.Fatal("the builds are not quantised (the default)")
	}
	key := vindex.ToolKey("s__tool_010")
	v1, _ := after.Vector(key)
	v0, _ := before.Vector(key)
	same := 0
	for j := range v0 {
		if d := math.Abs(float64(v0[j] - v1[j])); d > 0.01 {
			t.Fatalf("reused vector differs by %v in dimension %d", d, j)
		} else if d == 0 {
			same++
		}
	}
	if same < len(v0)/2 {
		t.Errorf("only %d of %d components of a reused vector kept their value", same, len(v0))
	}
}

// With Flat the vectors stay float32, and a reused vector is bit for bit
// the one the previous build computed.
func TestFlatIncrementalReusesExactVectors(t *testing.T) {
	c := newCatalog(10)
	x, err := indexer.New(indexer.Config{Catalog: c, Embedder: embed.NewBuiltin(), Flat: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Build(context.Background(), indexer.ModeFull); err != nil {
		t.Fatal(err)
	}
	before, _, _ := x.Current()
	c.mu.Lock()
	extra := catalog.Tool{Server: "s", Name: "new_tool", Description: "Something else entirely."}
	catalog.Finalize(&extra)
	c.tools = append(c.tools, extra)
	c.mu.Unlock()
	if _, err := x.Build(context.Background(), indexer.ModeIncremental); err != nil {
		t.Fatal(err)
	}
	after, _, _ := x.Current()
	if after.Quantized() {
		t.Fatal("Flat build is quantised")
	}
	key := vindex.ToolKey("s__tool_003")
	v1, _ := after.Vector(key)
	v0, _ := before.Vector(key)
	if !equal(v0, v1) {
		t.Error("reused vector differs")
	}
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestServerTextChangeReembeds(t *testing.T) {
	c := newCatalog(5)
	e := &counting{Embedder: embed.NewBuiltin()}
	x := newIndexer(t, c, e, nil)
	if _, err := x.Build(context.Background(), indexer.ModeFull); err != nil {
		t.Fatal(err)
	}
	c.servers[0].Description = "A different description"
	e.docs.Store(0)
	if _, err := x.Build(context.Background(), indexer.ModeIncremental); err != nil {
		t.Fatal(err)
	}
	if got := e.docs.Load(); got != 5 {
		t.Errorf("embedded %d, want all 5: the server description is part of each document", got)
	}
}

// TestModelMismatchForcesFullRebuild: a persisted index of another model or
// dimension is rebuilt in full even under incremental and off.
func TestModelMismatchForcesFullRebuild(t *testing.T) {
	for _, mode := range []indexer.Mode{indexer.ModeIncremental, indexer.ModeOff} {
		t.Run(string(mode), func(t *testing.T) {
			dir := t.TempDir()
			c := newCatalog(20)
			old := &counting{Embedder: embed.NewBuiltin(), id: "old-model"}
			if _, err := newIndexer(t, c, old, dirPersister(dir)).Build(context.Background(), indexer.ModeFull); err != nil {
				t.Fatal(err)
			}
			cur := &counting{Embedder: embed.NewBuiltin()}
			x := newIndexer(t, c, cur, dirPersister(dir))
			res, err := x.Build(context.Background(), mode)
			if err != nil {
				t.Fatal(err)
			}
			if res.Mode != indexer.ModeFull || cur.docs.Load() != 20 {
				t.Errorf("mode %s with another model: ran %s and embedded %d, want full and 20", mode, res.Mode, cur.docs.Load())
			}
			_, meta, ok := x.Current()
			if !ok || meta.ModelID != cur.ModelID() {
				t.Errorf("current meta model = %q", meta.ModelID)
			}
			// The rebuilt index was published: a third indexer loads it
			// with off and embeds nothing.
			third := &counting{Embedder: embed.NewBuiltin()}
			y := newIndexer(t, c, third, dirPersister(dir))
			if res, err := y.Build(context.Background(), indexer.ModeOff); err != nil || res.Mode != indexer.ModeOff || third.docs.Load() != 0 {
				t.Errorf("off after publish: %+v %v, embedded %d", res, err, third.docs.Load())
			}
		})
	}
}

// TestCorruptPersistedIndex: a truncated index gives a clear error and no
// index under off (keyword fallback), and a full rebuild under incremental.
func TestCorruptPersistedIndex(t *testing.T) {
	dir := t.TempDir()
	c := newCatalog(10)
	e := embed.NewBuiltin()
	if _, err := newIndexer(t, c, e, dirPersister(dir)).Build(context.Background(), indexer.ModeFull); err != nil {
		t.Fatal(err)
	}
	blobs, _ := filepath.Glob(filepath.Join(dir, "idx", "indexes", "*.faiss"))
	if len(blobs) != 1 {
		t.Fatalf("published blobs: %v", blobs)
	}
	p := blobs[0]
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}

	x := newIndexer(t, c, e, dirPersister(dir))
	_, err := x.Build(context.Background(), indexer.ModeOff)
	if err == nil || !strings.Contains(err.Error(), "cannot be read") || !strings.Contains(err.Error(), "keyword scan") {
		t.Errorf("off with a corrupt index: err = %v, want a clear error", err)
	}
	if _, _, ok := x.Current(); ok {
		t.Error("a corrupt index was made current")
	}
	if st := x.Stats(); st.LastError == "" || st.ToolsInIndex != 0 {
		t.Errorf("stats = %+v, want the error recorded", st)
	}

	cnt := &counting{Embedder: e}
	y := newIndexer(t, c, cnt, dirPersister(dir))
	res, err := y.Build(context.Background(), indexer.ModeIncremental)
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != indexer.ModeFull || cnt.docs.Load() != 10 {
		t.Errorf("incremental over a corrupt index: %+v, embedded %d", res, cnt.docs.Load())
	}
	if _, _, ok := y.Current(); !ok {
		t.Error("no index after the rebuild")
	}

	// Meta that does not match the index is refused the same way.
	metas, _ := filepath.Glob(filepath.Join(dir, "idx", "indexes", "*.json"))
	for _, m := range metas {
		os.WriteFile(m, []byte(`{"model_id":"`+e.ModelID()+`","dim":`+fmt.Sprint(e.Dim())+`,"count":3}`), 0o644)
	}
	z := newIndexer(t, c, e, dirPersister(dir))
	if _, err := z.Build(context.Background(), indexer.ModeOff); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("mismatched meta: err = %v", err)
	}
	if _, _, ok := z.Current(); ok {
		t.Error("an index with mismatched meta was made current")
	}
}

func TestOffWithoutPersistedIndex(t *testing.T) {
	c := newCatalog(3)
	e := &counting{Embedder: embed.NewBuiltin()}
	x := newIndexer(t, c, e, dirPersister(t.TempDir()))
	if _, err := x.Build(context.Background(), indexer.ModeOff); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := x.Current(); ok || e.docs.Load() != 0 {
		t.Error("off without a persisted index should build nothing")
	}
}

func TestRefreshPicksUpOtherProcess(t *testing.T) {
	dir := t.TempDir()
	c := newCatalog(8)
	e := embed.NewBuiltin()
	writer := newIndexer(t, c, e, dirPersister(dir))
	reader := newIndexer(t, c, e, dirPersister(dir))
	if changed, err := reader.Refresh(context.Background()); err != nil || changed {
		t.Fatalf("refresh with nothing published: %v %v", changed, err)
	}
	if _, err := writer.Build(context.Background(), indexer.ModeFull); err != nil {
		t.Fatal(err)
	}
	changed, err := reader.Refresh(context.Background())
	if err != nil || !changed {
		t.Fatalf("refresh after publish: %v %v", changed, err)
	}
	ix, _, ok := reader.Current()
	if !ok || ix.Len() != 8 {
		t.Fatalf("reader has no index after refresh")
	}
	if changed, _ := reader.Refresh(context.Background()); changed {
		t.Error("second refresh reported a change")
	}
	// An index published by another model is not picked up.
	other := newIndexer(t, c, &reversed{counting{Embedder: e, id: "x"}}, dirPersister(dir))
	if _, err := other.Build(context.Background(), indexer.ModeFull); err != nil {
		t.Fatal(err)
	}
	if changed, err := reader.Refresh(context.Background()); changed || err == nil {
		t.Errorf("refresh to another model's index: changed=%v err=%v", changed, err)
	}
	if _, meta, _ := reader.Current(); meta.ModelID != e.ModelID() {
		t.Error("reader swapped to another model's index")
	}
}

// reversed is another "model": it reverses the components of each vector.
type reversed struct{ counting }

func (r *reversed) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := r.counting.EmbedDocuments(ctx, texts)
	for _, v := range vecs {
		for i, j := 0, len(v)-1; i < j; i, j = i+1, j-1 {
			v[i], v[j] = v[j], v[i]
		}
	}
	return vecs, err
}

// failing fails after n documents.
type failing struct {
	embed.Embedder
	n atomic.Int64
}

func (f *failing) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	if f.n.Add(int64(len(texts))) > 15 {
		return nil, errors.New("embedding service unavailable")
	}
	return f.Embedder.EmbedDocuments(ctx, texts)
}

func TestFailedBuildKeepsPreviousIndex(t *testing.T) {
	c := newCatalog(10)
	f := &failing{Embedder: embed.NewBuiltin()}
	x := newIndexer(t, c, f, nil)
	if _, err := x.Build(context.Background(), indexer.ModeFull); err != nil {
		t.Fatal(err)
	}
	before, _, _ := x.Current()
	_, err := x.Build(context.Background(), indexer.ModeFull)
	if err == nil || !strings.Contains(err.Error(), "previous index stays in use") || !strings.Contains(err.Error(), "embedding service unavailable") {
		t.Errorf("err = %v", err)
	}
	if after, _, _ := x.Current(); after != before {
		t.Error("a failed build replaced the index")
	}
}

func TestBadModeAndConfig(t *testing.T) {
	if _, err := indexer.ParseMode("sometimes"); err == nil {
		t.Error("ParseMode accepted a bad mode")
	}
	if _, err := indexer.New(indexer.Config{}); err == nil {
		t.Error("New accepted an empty config")
	}
	x := newIndexer(t, newCatalog(1), embed.NewBuiltin(), nil)
	if _, err := x.Build(context.Background(), "weekly"); err == nil {
		t.Error("Build accepted a bad mode")
	}
}

// TestConcurrentReaders: readers always see a complete index while builds
// run.
func TestConcurrentReaders(t *testing.T) {
	c := newCatalog(60)
	x := newIndexer(t, c, embed.NewBuiltin(), nil)
	if _, err := x.Build(context.Background(), indexer.ModeFull); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var bad atomic.Int64
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				ix, meta, ok := x.Current()
				if !ok || ix.Len() != 60 || meta.Check(ix) != nil {
					bad.Add(1)
				}
			}
		}()
	}
	for range 5 {
		if _, err := x.Build(context.Background(), indexer.ModeFull); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
	if bad.Load() > 0 {
		t.Errorf("%d reads saw an incomplete index", bad.Load())
	}
}

// TestBucketConfig publishes through Config.Bucket/Prefix and loads the
// index in a second indexer with ModeOff, embedding nothing.
func TestBucketConfig(t *testing.T) {
	dir := t.TempDir()
	c := newCatalog(12)
	a, err := indexer.New(indexer.Config{Catalog: c, Embedder: embed.NewBuiltin(), Bucket: indexpub.NewDirBucket(dir), Prefix: "tenant/"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Build(context.Background(), indexer.ModeFull); err != nil {
		t.Fatal(err)
	}
	if _, meta, _ := a.Current(); meta.IndexSHA256 == "" {
		t.Error("the published meta has no IndexSHA256")
	}
	if _, err := os.Stat(filepath.Join(dir, "tenant", indexpub.PointerKey)); err != nil {
		t.Errorf("no pointer under the prefix: %v", err)
	}
	cnt := &counting{Embedder: embed.NewBuiltin()}
	b, _ := indexer.New(indexer.Config{Catalog: c, Embedder: cnt, Bucket: indexpub.NewDirBucket(dir), Prefix: "tenant/"})
	if _, err := b.Build(context.Background(), indexer.ModeOff); err != nil {
		t.Fatal(err)
	}
	if ix, _, ok := b.Current(); !ok || ix.Len() != 12 || cnt.docs.Load() != 0 {
		t.Errorf("off load: ok=%v embedded=%d", ok, cnt.docs.Load())
	}
	// Incremental on top of the loaded index embeds nothing either.
	if res, err := b.Build(context.Background(), indexer.ModeIncremental); err != nil || res.Reused != 12 || cnt.docs.Load() != 0 {
		t.Errorf("incremental after load: %+v %v embedded=%d", res, err, cnt.docs.Load())
	}
}

// TestBeforeSwitchHook: Config.BeforeSwitch sees each build's pointer
// before it is published; its error leaves the previous build published
// and is returned by Build.
func TestBeforeSwitchHook(t *testing.T) {
	dir := t.TempDir()
	c := newCatalog(5)
	var seen []indexpub.Pointer
	fail := false
	x, err := indexer.New(indexer.Config{Catalog: c, Embedder: embed.NewBuiltin(), Bucket: indexpub.NewDirBucket(dir),
		BeforeSwitch: func(_ context.Context, next indexpub.Pointer) error {
			seen = append(seen, next)
			if fail {
				return errors.New("copy not written")
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Build(context.Background(), indexer.ModeFull); err != nil {
		t.Fatal(err)
	}
	_, meta, _ := x.Current()
	if len(seen) != 1 || seen[0].SHA256 != meta.IndexSHA256 || seen[0].Count != 5 {
		t.Fatalf("BeforeSwitch saw %+v; want one pointer to the published build %s", seen, meta.IndexSHA256)
	}
	fail = true
	c.mu.Lock()
	c.tools = c.tools[:4] // another index
	c.mu.Unlock()
	if _, err := x.Build(context.Background(), indexer.ModeFull); err == nil || !strings.Contains(err.Error(), "copy not written") {
		t.Fatalf("Build with a failing BeforeSwitch: %v", err)
	}
	_, published, err := indexpub.NewLoader(indexpub.NewDirBucket(dir), "").Load(context.Background())
	if err != nil || published.IndexSHA256 != meta.IndexSHA256 || published.Count != 5 {
		t.Fatalf("after the failed switch the published build is %v %s (%v), want the first (%v %s)", published.BuiltAt, published.IndexSHA256, err, meta.BuiltAt, meta.IndexSHA256)
	}
}

// A float32 index published by an earlier version is reused by the first
// incremental build (nothing re-embedded), which publishes it as 8-bit
// once; the next incremental build of the unchanged catalog (a fresh
// process, as a cold sync function) publishes nothing new.
func TestFlatIndexMigratesToEightBitOnce(t *testing.T) {
	ctx := context.Background()
	c := newCatalog(30)
	b := indexpub.NewDirBucket(t.TempDir())
	old, err := indexer.New(indexer.Config{Catalog: c, Embedder: embed.NewBuiltin(), Bucket: b, Prefix: "ix/", Flat: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Build(ctx, indexer.ModeFull); err != nil {
		t.Fatal(err)
	}
	flatPtr, err := indexpub.ReadPointer(ctx, b, "ix/")
	if err != nil {
		t.Fatal(err)
	}
	var last indexpub.Pointer
	for i, wantNew := range []bool{true, false, false} {
		e := &counting{Embedder: embed.NewBuiltin()}
		x, err := indexer.New(indexer.Config{Catalog: c, Embedder: e, Bucket: b, Prefix: "ix/"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := x.Build(ctx, indexer.ModeIncremental)
		if err != nil || res.Reused != 30 || e.docs.Load() != 0 {
			t.Fatalf("build %d: %+v, %v, %d embedded; want every vector reused", i, res, err, e.docs.Load())
		}
		ix, _, _ := x.Current()
		ptr, err := indexpub.ReadPointer(ctx, b, "ix/")
		if err != nil || !ix.Quantized() {
			t.Fatalf("build %d: quantised %v, pointer %v", i, ix.Quantized(), err)
		}
		if changed := ptr != last; changed != wantNew || ptr.SHA256 == flatPtr.SHA256 {
			t.Fatalf("build %d: pointer changed %v, want %v (%s, float32 %s)", i, changed, wantNew, ptr.SHA256, flatPtr.SHA256)
		}
		last = ptr
	}
}
