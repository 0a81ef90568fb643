package indexpub

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// benchCatalog is n tools shaped like pkg/awsrt's synthetic benchmark
// catalog (100 tools per server, a short schema each).
func benchCatalog(n int) ([]catalog.Tool, []catalog.Server) {
	verbs := []string{"create", "list", "delete", "update", "search", "export"}
	nouns := []string{"invoice", "customer", "pull_request", "ticket", "calendar_event", "document"}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var tools []catalog.Tool
	var servers []catalog.Server
	for i := range n {
		srv := fmt.Sprintf("domain%04d", i/100)
		if i%100 == 0 {
			servers = append(servers, catalog.Server{ID: srv, Title: srv, Status: catalog.StatusActive})
		}
		v, o := verbs[i%len(verbs)], nouns[(i/7)%len(nouns)]
		t := catalog.Tool{
			Server: srv, Name: fmt.Sprintf("%s_%s_%d", v, o, i),
			Description: fmt.Sprintf("%s a %s in %s. Returns the %s with its id, status, owner and timestamps. Use it when the user asks to %s %ss.", v, o, srv, o, v, o),
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"%s_id":{"type":"string","description":"The %s id."},"limit":{"type":"integer","description":"Maximum results."},"query":{"type":"string"}},"required":["%s_id"]}`, o, o, o)),
			UpdatedAt:   now,
		}
		catalog.Finalize(&t)
		tools = append(tools, t)
	}
	return tools, servers
}

// BenchmarkReadCatalog decodes a 100k-tool catalog copy in the binary
// encoding and in the JSON one written before it.
//
//	go test -run '^$' -bench ReadCatalog -benchmem ./pkg/index/indexpub/
func BenchmarkReadCatalog(b *testing.B) {
	tools, servers := benchCatalog(100_000)
	c := CatalogCopy{IndexSHA256: "ix", KeywordsSHA256: "kw", Tools: tools, Servers: servers}
	plain, err := encodeCopyBinary(nil, c)
	if err != nil {
		b.Fatal(err)
	}
	var js bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&js, gzip.BestSpeed)
	if err := json.NewEncoder(zw).Encode(c); err != nil {
		b.Fatal(err)
	}
	zw.Close()
	var bin bytes.Buffer
	zw, _ = gzip.NewWriterLevel(&bin, gzip.BestSpeed)
	zw.Write(plain)
	zw.Close()
	for _, enc := range []struct {
		name string
		body []byte
	}{{"binary", bin.Bytes()}, {"json", js.Bytes()}} {
		b.Run(enc.name, func(b *testing.B) {
			bk := NewDirBucket(b.TempDir())
			if _, err := bk.Put(context.Background(), CatalogKey, enc.body, Cond{}); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				got, _, ok, err := ReadCatalog(context.Background(), bk, "", "ix", "")
				if err != nil || !ok || len(got.Tools) != len(tools) {
					b.Fatalf("ok=%v err=%v tools=%d", ok, err, len(got.Tools))
				}
			}
			b.ReportMetric(float64(len(enc.body))/(1<<20), "stored-MB")
		})
	}
	b.Logf("uncompressed binary copy: %.1f MB", float64(len(plain))/(1<<20))
}
