package s3bucket

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/aws/s3bucket/s3test"
	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

// BenchmarkIndexLoad publishes an index of TOOLRAG_S3_BENCH_TOOLS (default
// 100000) random 1,536-dim unit vectors (the builtin embedder's size) to
// the S3 emulator, as float32 and as 8-bit codes, and measures what a
// gateway's cold start spends on it: Loader.Load (pointer, meta and index
// GETs, SHA-256 check, in-place decode), the S3 GETs it makes, the bytes
// per tool and the heap the loaded index and meta keep.
//
//	go test -run '^$' -bench IndexLoad -benchtime 3x ./pkg/aws/s3bucket/
func BenchmarkIndexLoad(b *testing.B) {
	n := 100_000
	if v := os.Getenv("TOOLRAG_S3_BENCH_TOOLS"); v != "" {
		if x, err := strconv.Atoi(v); err == nil && x > 0 {
			n = x
		}
	}
	const dim = 1536
	r := rand.New(rand.NewPCG(1, 2))
	flat := vindex.New(dim)
	flat.Grow(n)
	meta := vindex.Meta{ModelID: "bench", Hashes: map[string]string{}}
	v := make([]float32, dim)
	for i := range n {
		var norm float64
		for j := range v {
			v[j] = float32(r.NormFloat64())
			norm += float64(v[j]) * float64(v[j])
		}
		for j := range v {
			v[j] = float32(float64(v[j]) / math.Sqrt(norm))
		}
		tool := fmt.Sprintf("server%04d__tool_name_%d", i/100, i)
		key, err := meta.Assign(tool)
		if err != nil {
			b.Fatal(err)
		}
		if err := flat.Upsert(key, v); err != nil {
			b.Fatal(err)
		}
		meta.Hashes[tool] = fmt.Sprintf("sha256:%032x", i)
	}
	indexes := map[string]*vindex.Index{"flat": flat, "sq8": flat.Quantize(nil)}
	for _, enc := range []string{"sq8", "flat"} {
		b.Run("index="+enc, func(b *testing.B) {
			srv := s3test.New(b, bucket)
			bk := New(srv.Client, bucket)
			ix := indexes[enc]
			m := meta
			m.BuiltAt = time.Now()
			if _, err := indexpub.NewPublisher(bk, "index/").Publish(context.Background(), ix, m); err != nil {
				b.Fatal(err)
			}
			var gets int64
			var heap float64
			for b.Loop() {
				b.StopTimer()
				before := liveHeap()
				gets0 := srv.Gets.Load()
				b.StartTimer()
				loaded, lm, err := indexpub.NewLoader(bk, "index/").Load(context.Background())
				if err != nil || loaded.Len() != n {
					b.Fatalf("load: %v", err)
				}
				b.StopTimer()
				gets += srv.Gets.Load() - gets0
				heap += float64(liveHeap()-before) / (1 << 20)
				runtime.KeepAlive(loaded)
				runtime.KeepAlive(lm)
				b.StartTimer()
			}
			runs := float64(b.N)
			b.ReportMetric(float64(ix.EncodedSize())/float64(n), "index-B/tool")
			b.ReportMetric(float64(gets)/runs, "s3-gets")
			b.ReportMetric(heap/runs, "heap-MB")
		})
	}
}

func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
