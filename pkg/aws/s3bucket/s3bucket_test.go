package s3bucket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/s3bucket/s3test"
	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

const bucket = "index-bucket"

func newBucket(t testing.TB) (*Bucket, *s3test.Server) {
	t.Helper()
	srv := s3test.New(t, bucket)
	return New(srv.Client, bucket), srv
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestGetPutConditions(t *testing.T) {
	ctx := context.Background()
	b, _ := newBucket(t)

	if _, _, err := b.Get(ctx, "p/missing.json", ""); !errors.Is(err, indexpub.ErrNotExist) {
		t.Fatalf("Get missing: %v, want ErrNotExist", err)
	}
	etag1, err := b.Put(ctx, "p/current.json", []byte(`{"v":1}`), indexpub.Cond{IfNoneMatch: true})
	if err != nil || etag1 == "" {
		t.Fatalf("create: etag %q, %v", etag1, err)
	}
	body, etag, err := b.Get(ctx, "p/current.json", "")
	if err != nil || string(body) != `{"v":1}` || etag != etag1 {
		t.Fatalf("Get = %q %q %v, want the body and ETag %q", body, etag, err, etag1)
	}
	if _, _, err := b.Get(ctx, "p/current.json", etag1); !errors.Is(err, indexpub.ErrNotModified) {
		t.Fatalf("Get If-None-Match current ETag: %v, want ErrNotModified", err)
	}
	if body, _, err := b.Get(ctx, "p/current.json", `"0123"`); err != nil || string(body) != `{"v":1}` {
		t.Fatalf("Get If-None-Match other ETag: %q %v", body, err)
	}

	tests := []struct {
		name string
		cond indexpub.Cond
		want error
	}{
		{"create over existing", indexpub.Cond{IfNoneMatch: true}, indexpub.ErrPrecondition},
		{"if-match stale etag", indexpub.Cond{IfMatch: `"00000000000000000000000000000000"`}, indexpub.ErrPrecondition},
		{"if-match current etag", indexpub.Cond{IfMatch: etag1}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.Put(ctx, "p/current.json", []byte(tc.name), tc.cond)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("Put: %v, want %v", err, tc.want)
			}
		})
	}
	body, _, _ = b.Get(ctx, "p/current.json", "")
	if string(body) != "if-match current etag" {
		t.Fatalf("after the conditional puts the body is %q; a failed condition must not write", body)
	}
	// If-Match on a missing object: either error is allowed by the interface.
	if _, err := b.Put(ctx, "p/none.json", []byte("x"), indexpub.Cond{IfMatch: etag1}); !errors.Is(err, indexpub.ErrPrecondition) && !errors.Is(err, indexpub.ErrNotExist) {
		t.Fatalf("If-Match on a missing key: %v", err)
	}
	if _, _, err := b.Get(ctx, "p/none.json", ""); !errors.Is(err, indexpub.ErrNotExist) {
		t.Fatalf("a failed If-Match created the object: %v", err)
	}
}

func TestEmptyObject(t *testing.T) {
	ctx := context.Background()
	b, _ := newBucket(t)
	if _, err := b.Put(ctx, "empty", nil, indexpub.Cond{}); err != nil {
		t.Fatal(err)
	}
	body, etag, err := b.Get(ctx, "empty", "")
	if err != nil || len(body) != 0 || etag == "" {
		t.Fatalf("Get empty = %d bytes, %q, %v", len(body), etag, err)
	}
}

func TestMissingBucketIsNotErrNotExist(t *testing.T) {
	srv := s3test.New(t) // no buckets
	b := New(srv.Client, "nope")
	_, _, err := b.Get(context.Background(), "current.json", "")
	if err == nil || errors.Is(err, indexpub.ErrNotExist) {
		t.Fatalf("Get in a missing bucket: %v; it must be a real error, not \"nothing published\"", err)
	}
	if !strings.Contains(err.Error(), "s3://nope/current.json") {
		t.Errorf("error does not name the object: %v", err)
	}
}

func TestRangedGet(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		size, part int
		wantGets   int64
	}{
		{size: 999, part: 1000, wantGets: 1},
		{size: 1000, part: 1000, wantGets: 1},
		{size: 1001, part: 1000, wantGets: 2},
		{size: 10_500, part: 1000, wantGets: 11},
		{size: 64 << 10, part: 4 << 10, wantGets: 16},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d_by_%d", tc.size, tc.part), func(t *testing.T) {
			b, srv := newBucket(t)
			b.PartSize, b.Parallel = int64(tc.part), 3
			want := randomBytes(tc.size, uint64(tc.size))
			putEtag, err := b.Put(ctx, "blob", want, indexpub.Cond{})
			if err != nil {
				t.Fatal(err)
			}
			before := srv.Gets.Load()
			got, etag, err := b.Get(ctx, "blob", "")
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("ranged download differs from the object (%d vs %d bytes)", len(got), len(want))
			}
			if etag != putEtag {
				t.Errorf("etag %q, want %q", etag, putEtag)
			}
			if n := srv.Gets.Load() - before; n != tc.wantGets {
				t.Errorf("%d GET requests, want %d", n, tc.wantGets)
			}
		})
	}
}

// An object replaced between the first part and a later one must not come
// back as a mix of both versions.
func TestRangedGetRestartsWhenObjectChanges(t *testing.T) {
	ctx := context.Background()
	b, srv := newBucket(t)
	b.PartSize, b.Parallel = 1000, 1
	v1, v2 := randomBytes(5000, 1), randomBytes(5000, 2)
	srv.PutRaw(t, bucket, "blob", v1)
	var n atomic.Int64
	srv.OnRequest(func(r *http.Request) {
		if r.Method == http.MethodGet && n.Add(1) == 3 {
			srv.PutRaw(t, bucket, "blob", v2)
		}
	})
	got, _, err := b.Get(ctx, "blob", "")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, v2) {
		t.Fatalf("got a mix of two versions (equal to v1: %v)", bytes.Equal(got, v1))
	}
}

// The ranged GETs of one object run at most Parallel at once, and the
// first that fails cancels those in flight and starts no more.
func TestRangedGetBoundAndFirstFailure(t *testing.T) {
	const size, part = 8000, 1000 // one first GET, then 7 ranged parts
	tests := []struct {
		name     string
		parallel int
		fail     string // Range of the part answered 403; the others then wait to be cancelled
		wantGets int64  // requests that reached the server
		wantErr  string
	}{
		{name: "one at a time", parallel: 1, wantGets: 8},
		{name: "three at a time", parallel: 3, wantGets: 8},
		{name: "more than the parts", parallel: 16, wantGets: 8},
		{name: "first failure cancels the rest", parallel: 3, fail: "bytes=2000-2999", wantGets: 1 + 3, wantErr: "bytes 2000-2999"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := s3test.New(t, bucket)
			want := randomBytes(size, 7)
			srv.PutRaw(t, bucket, "blob", want)
			target, err := url.Parse(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			proxy := httputil.NewSingleHostReverseProxy(target)
			var gets atomic.Int64
			var inflight testenv.InFlight
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				gets.Add(1)
				defer inflight.Enter()()
				rng := r.Header.Get("Range")
				switch {
				case tc.fail != "" && rng == tc.fail:
					time.Sleep(20 * time.Millisecond) // let the other parts start
					w.Header().Set("Content-Type", "application/xml")
					w.WriteHeader(http.StatusForbidden)
					fmt.Fprint(w, `<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`)
					return
				case tc.fail != "" && !strings.HasPrefix(rng, "bytes=0-"):
					select {
					case <-r.Context().Done(): // the client gave up on this part
					case <-time.After(10 * time.Second):
					}
					return
				case !strings.HasPrefix(rng, "bytes=0-"):
					time.Sleep(20 * time.Millisecond) // long enough for the parts to overlap
				}
				proxy.ServeHTTP(w, r)
			}))
			t.Cleanup(front.Close)
			b := New(s3test.NewClient(front.URL), bucket)
			b.PartSize, b.Parallel = part, tc.parallel
			start := time.Now()
			got, _, err := b.Get(context.Background(), "blob", "")
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("Get took %v: the parts in flight were not cancelled", elapsed)
			}
			if n := gets.Load(); n != tc.wantGets {
				t.Errorf("%d GET requests, want %d", n, tc.wantGets)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "AccessDenied") {
					t.Fatalf("err = %v, want the failed part (%s) and why", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatal("ranged download differs from the object")
			}
			if m, want := inflight.Max(), int32(min(tc.parallel, size/part-1)); m != want {
				t.Errorf("at most %d GETs in flight, want %d (Parallel %d)", m, want, tc.parallel)
			}
		})
	}
}

func TestListDelete(t *testing.T) {
	ctx := context.Background()
	b, _ := newBucket(t)
	for _, k := range []string{"p/indexes/a.faiss", "p/indexes/a.json", "p/current.json", "q/x"} {
		if _, err := b.Put(ctx, k, []byte(k), indexpub.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	objs, err := b.List(ctx, "p/indexes/")
	if err != nil || len(objs) != 2 || objs[0].Key != "p/indexes/a.faiss" || objs[0].Size != int64(len("p/indexes/a.faiss")) || objs[0].ModTime.IsZero() {
		t.Fatalf("List = %+v, %v", objs, err)
	}
	if err := b.Delete(ctx, "p/indexes/a.json"); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "p/indexes/a.json"); err != nil {
		t.Fatalf("deleting a missing object: %v", err)
	}
	if objs, _ := b.List(ctx, "p/indexes/"); len(objs) != 1 {
		t.Fatalf("after Delete: %+v", objs)
	}
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// build returns an index whose vectors encode the build number.
func build(t testing.TB, number, n int) (*vindex.Index, vindex.Meta) {
	t.Helper()
	ix := vindex.New(4)
	meta := vindex.Meta{ModelID: "m", BuiltAt: t0.Add(time.Duration(number) * time.Millisecond), Hashes: map[string]string{}}
	for i := range n {
		key, err := meta.Assign(fmt.Sprintf("s__t%d", i))
		if err != nil {
			t.Fatal(err)
		}
		b := float32(number)
		norm := float32(math.Sqrt(float64(b*b + 1)))
		if err := ix.Upsert(key, []float32{b / norm, 1 / norm, 0, 0}); err != nil {
			t.Fatal(err)
		}
	}
	return ix, meta
}

// Two publishers race to publish through S3 conditional writes: every
// publish either wins or reports the newer index, and the pointer ends at
// the newest build, consistent with its blobs.
func TestConcurrentPublishers(t *testing.T) {
	ctx := context.Background()
	b, srv := newBucket(t)
	b.PartSize = 512 // the index blobs are fetched in parts too
	const perPublisher = 12
	var wg sync.WaitGroup
	errs := make(chan error, 2*perPublisher)
	for p := range 2 {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			pub := indexpub.NewPublisher(b, "index/")
			for i := range perPublisher {
				number := 1 + 2*i + p // publishers interleave build numbers
				ix, meta := build(t, number, 20)
				if _, err := pub.Publish(ctx, ix, meta); err != nil && !errors.Is(err, indexpub.ErrStale) {
					errs <- fmt.Errorf("publisher %d build %d: %w", p, number, err)
				}
			}
		}(p)
	}
	// A reader refreshes throughout and must only ever see whole builds.
	stop := make(chan struct{})
	readErrs := make(chan error, 1)
	go func() {
		l := indexpub.NewLoader(b, "index/")
		last := 0
		for {
			select {
			case <-stop:
				close(readErrs)
				return
			default:
			}
			ix, meta, _, err := l.Refresh(ctx)
			if errors.Is(err, indexpub.ErrNotExist) {
				continue
			}
			if err != nil {
				readErrs <- err
				close(readErrs)
				return
			}
			if err := meta.Check(ix); err != nil {
				readErrs <- err
				close(readErrs)
				return
			}
			number := int(meta.BuiltAt.Sub(t0) / time.Millisecond)
			if number < last {
				readErrs <- fmt.Errorf("reader went back from build %d to %d", last, number)
				close(readErrs)
				return
			}
			last = number
		}
	}()
	wg.Wait()
	close(stop)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for err := range readErrs {
		t.Errorf("reader: %v", err)
	}
	ix, meta, err := indexpub.NewLoader(b, "index/").Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := int(meta.BuiltAt.Sub(t0) / time.Millisecond); got != 2*perPublisher {
		t.Errorf("final pointer names build %d, want the newest %d", got, 2*perPublisher)
	}
	v, _ := ix.Vector(ix.IDs()[0])
	if got := int(math.Round(float64(v[0] / v[1]))); got != 2*perPublisher {
		t.Errorf("index blob of build %d under the pointer of build %d", got, 2*perPublisher)
	}
	if srv.Puts.Load() == 0 {
		t.Fatal("no PUT reached the emulator")
	}
}

// Head reads an object's size and ETag without its body, and ETagOf
// predicts the ETag of a Put: indexpub.Unchanged can then skip a write
// of the same bytes without reading the object.
func TestHeadAndUnchanged(t *testing.T) {
	ctx := context.Background()
	b, srv := newBucket(t)
	if _, err := b.Head(ctx, "p/missing"); !errors.Is(err, indexpub.ErrNotExist) {
		t.Fatalf("Head missing: %v, want ErrNotExist", err)
	}
	body := randomBytes(3000, 9)
	etag, err := b.Put(ctx, "p/obj", body, indexpub.Cond{})
	if err != nil {
		t.Fatal(err)
	}
	gets := srv.Gets.Load()
	info, err := b.Head(ctx, "p/obj")
	if err != nil || info.Size != int64(len(body)) || info.ETag != etag || b.ETagOf(body) != etag {
		t.Fatalf("Head = %+v %v; Put gave ETag %q, ETagOf %q", info, err, etag, b.ETagOf(body))
	}
	if srv.Gets.Load() != gets {
		t.Fatal("Head issued a GET")
	}
	other := bytes.Clone(body)
	other[0]++
	tests := []struct {
		name string
		key  string
		body []byte
		want bool
	}{
		{"same bytes", "p/obj", body, true},
		{"one byte differs", "p/obj", other, false},
		{"shorter", "p/obj", body[:10], false},
		{"missing object", "p/none", body, false},
	}
	for _, tc := range tests {
		if got := indexpub.Unchanged(ctx, b, tc.key, tc.body); got != tc.want {
			t.Errorf("%s: Unchanged = %v, want %v", tc.name, got, tc.want)
		}
	}
}
