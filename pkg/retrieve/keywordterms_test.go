package retrieve_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// exactScores lists a response's tools with their scores at full precision.
func exactScores(resp retrieve.Response) []string {
	var out []string
	for _, r := range resp.Results {
		out = append(out, fmt.Sprintf("%s=%v", r.Tool.ID, r.Score))
	}
	return out
}

// preparedRetriever is a retriever whose first sync takes the terms from p.
func preparedRetriever(t *testing.T, c *memCatalog, p *retrieve.KeywordTerms) *retrieve.Retriever {
	t.Helper()
	r, err := retrieve.New(retrieve.Config{Tools: c})
	if err != nil {
		t.Fatal(err)
	}
	r.UsePrepared(p)
	if err := r.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r
}

// sameRankings fails unless a and b answer every query with the same tools
// and the same scores, to the last bit.
func sameRankings(t *testing.T, what string, a, b *retrieve.Retriever, queries []sanityQuery) {
	t.Helper()
	for _, q := range queries {
		req := retrieve.Request{Query: q.Query, TopK: 20, Policy: policy.Unrestricted()}
		ra, err := a.Retrieve(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := b.Retrieve(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(exactScores(ra)) != fmt.Sprint(exactScores(rb)) {
			t.Errorf("%s, %s: analysed %v\nprepared %v", what, q.ID, exactScores(ra), exactScores(rb))
		}
	}
}

// An index built from decoded terms holds what an analysed one holds (its
// own encoding is byte-identical) and ranks and scores exactly like it,
// without analysing any tool.
func TestDecodedKeywordTermsRankLikeAnalysed(t *testing.T) {
	c, queries := loadSynthetic(t)
	analysed := newRetriever(t, retrieve.Config{Tools: c})
	enc := analysed.Keywords().EncodeTerms()
	if !bytes.Equal(enc, analysed.Keywords().EncodeTerms()) {
		t.Fatal("two encodings of the same index differ")
	}
	p, err := retrieve.DecodeKeywordTerms(enc)
	if err != nil {
		t.Fatal(err)
	}
	if p.Len() != len(c.tools) {
		t.Fatalf("decoded %d tools, catalog %d", p.Len(), len(c.tools))
	}
	kw := retrieve.NewKeywordIndex(retrieve.FieldWeights{})
	up, _, reused := kw.SyncPrepared(c.tools, c.servers, p)
	if up != len(c.tools) || reused != len(c.tools) {
		t.Fatalf("synced %d tools, %d from the decoded terms; want all %d from them", up, reused, len(c.tools))
	}
	if !bytes.Equal(kw.EncodeTerms(), enc) {
		t.Fatal("the index built from decoded terms encodes differently from the analysed one")
	}
	// A tool's terms are handed out once (moved, not copied): decoded
	// terms used again leave every tool to be analysed, which ranks the
	// same.
	again := preparedRetriever(t, c, p)
	if n := again.PreparedTools(); n != 0 {
		t.Errorf("decoded terms used a second time gave %d tools; want 0 (each is handed out once)", n)
	}
	sameRankings(t, "decoded terms used again", analysed, again, queries)
	fresh, err := retrieve.DecodeKeywordTerms(enc)
	if err != nil {
		t.Fatal(err)
	}
	r := preparedRetriever(t, c, fresh)
	if n := r.PreparedTools(); n != len(c.tools) {
		t.Errorf("retriever took %d tools from the decoded terms; want %d", n, len(c.tools))
	}
	sameRankings(t, "decoded", analysed, r, queries)
}

// Terms that do not fit are not used: a tool whose content or server text
// changed since they were written is analysed (the others still come from
// them), and damaged terms or terms of another analyser do not decode. The
// rankings are always those of an analysed index.
func TestStaleOrDamagedKeywordTermsFallBack(t *testing.T) {
	c, queries := loadSynthetic(t)
	old := newRetriever(t, retrieve.Config{Tools: c})
	enc := old.Keywords().EncodeTerms()

	// Stale: every fifth tool reworded, one server retitled.
	live := &memCatalog{tools: slices.Clone(c.tools), servers: slices.Clone(c.servers)}
	for i := 0; i < len(live.tools); i += 5 {
		live.tools[i].Description = "Reworded: forecasts, invoices and weather alerts."
		catalog.Finalize(&live.tools[i])
	}
	live.servers[0].Title = "A renamed server"
	renamed := 0
	for _, tl := range live.tools {
		if tl.Server == live.servers[0].ID {
			renamed++
		}
	}
	p, err := retrieve.DecodeKeywordTerms(enc)
	if err != nil {
		t.Fatal(err)
	}
	kw := retrieve.NewKeywordIndex(retrieve.FieldWeights{})
	_, _, reused := kw.SyncPrepared(live.tools, live.servers, p)
	if reused == 0 || reused > len(live.tools)-len(live.tools)/5-1 || reused+renamed < len(live.tools)-(len(live.tools)+4)/5 {
		t.Errorf("%d of %d tools taken from stale terms (%d reworded, %d on the renamed server)", reused, len(live.tools), (len(live.tools)+4)/5, renamed)
	}
	fresh := newRetriever(t, retrieve.Config{Tools: live})
	sameRankings(t, "stale", fresh, preparedRetriever(t, live, p), queries)

	// Damaged: truncated, a flipped byte, trailing bytes, another analyser.
	version := retrieve.AnalyzerVersion()
	other := bytes.Replace(enc[:len(enc)-4], []byte(version), []byte(version[:len(version)-1]+"x"), 1)
	other = binary.BigEndian.AppendUint32(other, crc32.Checksum(other, crc32.MakeTable(crc32.Castagnoli)))
	flipped := slices.Clone(enc)
	flipped[len(flipped)/2] ^= 0xff
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"truncated", enc[:len(enc)-7]},
		{"flipped byte", flipped},
		{"trailing", append(slices.Clone(enc), 0)},
		{"not terms", []byte(`{"tools":[]}`)},
		{"another analyser", other},
	} {
		p, err := retrieve.DecodeKeywordTerms(tc.b)
		if err == nil {
			t.Errorf("%s: decoded %d tools; want an error", tc.name, p.Len())
		}
		if tc.name == "another analyser" && !errors.Is(err, retrieve.ErrOtherAnalyzer) {
			t.Errorf("%s: %v; want ErrOtherAnalyzer", tc.name, err)
		}
	}
}

// BenchmarkKeywordPreparedSync10k measures a cold start's keyword index
// built from the published analysis (decode + SyncPrepared), to compare
// with BenchmarkKeywordColdSync10k (analysing every tool); terms-KB is the
// size of the encoding, uncompressed.
func BenchmarkKeywordPreparedSync10k(b *testing.B) {
	c := synthCatalog(10000)
	src := retrieve.NewKeywordIndex(retrieve.FieldWeights{})
	src.Sync(c.tools, c.servers)
	enc := src.EncodeTerms()
	for b.Loop() {
		p, err := retrieve.DecodeKeywordTerms(enc)
		if err != nil {
			b.Fatal(err)
		}
		kw := retrieve.NewKeywordIndex(retrieve.FieldWeights{})
		if _, _, reused := kw.SyncPrepared(c.tools, c.servers, p); reused != len(c.tools) {
			b.Fatalf("%d of %d tools from the analysis", reused, len(c.tools))
		}
	}
	b.ReportMetric(float64(len(enc))/1024, "terms-KB")
}
