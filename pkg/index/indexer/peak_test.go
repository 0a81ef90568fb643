package indexer_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
)

// The peak-memory benchmark runs each build in a child process (this test
// binary, re-executed) so that the peak resident set it reports (VmHWM,
// what a Lambda function's memory limit applies to) is the build's alone.
const peakChildEnv = "TOOLRAG_INDEXER_PEAK_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(peakChildEnv); spec != "" {
		os.Exit(peakChild(spec))
	}
	os.Exit(m.Run())
}

// peakChild runs "<tools> <full|incremental>": a full build published to a
// directory, then (incremental) one where 1% of the tools changed, as the
// sync function does, and prints the peak RSS and the last build's time.
func peakChild(spec string) int {
	var n int
	var mode string
	if _, err := fmt.Sscan(spec, &n, &mode); err != nil {
		fmt.Fprintln(os.Stderr, "bad spec:", spec, err)
		return 2
	}
	c := synthCatalog(n)
	dir, err := os.MkdirTemp("", "indexer-peak")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// TOOLRAG_INDEXER_BENCH_FLAT=1: float32 vectors (before 8-bit).
	flat := os.Getenv("TOOLRAG_INDEXER_BENCH_FLAT") == "1"
	x, err := indexer.New(indexer.Config{Catalog: c, Embedder: embed.NewBuiltin(), Bucket: indexpub.NewDirBucket(dir), Prefix: "index/", Flat: flat})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	start := time.Now()
	if _, err := x.Build(context.Background(), indexer.ModeFull); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if mode == "incremental" {
		for j := range n / 100 {
			c.tools[j].Description = fmt.Sprintf("changed %d", j)
			catalog.Finalize(&c.tools[j])
		}
		start = time.Now()
		if _, err := x.Build(context.Background(), indexer.ModeIncremental); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	took := time.Since(start)
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Printf("peak-kB %s build-ns %d\n", strings.TrimSuffix(strings.TrimSpace(v), " kB"), took.Nanoseconds())
			return 0
		}
	}
	fmt.Fprintln(os.Stderr, "no VmHWM")
	return 1
}

// BenchmarkBuildPeakRSS reports the peak RSS of a full build and publish,
// and of an incremental one on top of it (1% of the tools changed), of
// TOOLRAG_INDEXER_BENCH_TOOLS tools (default 10000):
//
//	go test -run '^$' -bench BuildPeakRSS -benchtime 1x ./pkg/index/indexer/
//	TOOLRAG_INDEXER_BENCH_TOOLS=100000 go test -run '^$' -bench BuildPeakRSS -benchtime 1x -timeout 30m ./pkg/index/indexer/
func BenchmarkBuildPeakRSS(b *testing.B) {
	n := 10000
	if v := os.Getenv("TOOLRAG_INDEXER_BENCH_TOOLS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("TOOLRAG_INDEXER_BENCH_TOOLS=%q", v)
		}
	}
	for _, mode := range []string{"full", "incremental"} {
		b.Run(fmt.Sprintf("%s-%d", mode, n), func(b *testing.B) {
			var peak, build float64
			for b.Loop() {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %s", peakChildEnv, n, mode))
				var out, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &stderr
				if err := cmd.Run(); err != nil {
					b.Fatalf("child: %v\n%s", err, stderr.String())
				}
				var kb, ns float64
				if _, err := fmt.Sscanf(out.String(), "peak-kB %g build-ns %g", &kb, &ns); err != nil {
					b.Fatalf("child printed %q: %v", out.String(), err)
				}
				peak = max(peak, kb/1024)
				build += ns / 1e9
			}
			b.ReportMetric(peak, "peak-rss-MB")
			b.ReportMetric(build/float64(b.N), "build-s")
		})
	}
}
