package awsrt

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// BenchmarkColdStartSilentUpstreams: NewGatewayFunction until loaded, with the
// echo server and 16 registered upstreams that accept connections and
// never answer (the default 5 s TOOL_RAG_UPSTREAM_LIST_TIMEOUT). Reports
// the connections the cold start opened to them.
//
//	TOOLRAG_TOOLS_DIR=... go test -run '^$' -bench ColdStartSilentUpstreams -benchtime 3x ./pkg/awsrt/
func BenchmarkColdStartSilentUpstreams(b *testing.B) {
	e := newTestEnv(b)
	e.register(b, "echo", startEcho(b))
	var holes []func() int64
	for i := range 16 {
		u, n := blackhole(b)
		e.register(b, fmt.Sprintf("hole%02d", i), u)
		holes = append(holes, n.Load)
	}
	cfg := e.config(b)
	cfg.Env.SyncTimeout, cfg.UpstreamListTimeout = time.Second, time.Second
	s, err := NewSyncer(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Handle(context.Background(), json.RawMessage(`{}`)); err != nil {
		b.Fatal(err)
	}
	s.Close()
	count := func() (n int64) {
		for _, h := range holes {
			n += h()
		}
		return n
	}
	before := count()
	b.ResetTimer()
	for b.Loop() {
		g, err := NewGatewayFunction(context.Background(), func() Config {
			c := e.config(b)
			c.UpstreamListTimeout = DefaultUpstreamListTimeout
			return c
		}())
		if err != nil {
			b.Fatal(err)
		}
		<-g.Loaded()
		g.Close()
	}
	b.ReportMetric(float64(count()-before)/float64(b.N), "silent-conns/op")
}
