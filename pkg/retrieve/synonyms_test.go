package retrieve

import (
	"context"
	"math"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

func TestExpandSynonyms(t *testing.T) {
	q := "buy a movie ticket"
	order, w := expandSynonyms(q, Terms(q), 0.3)
	// The query's own terms keep weight 1 and come first.
	for i, term := range Terms(q) {
		if order[i] != term || w[term] != 1 {
			t.Fatalf("query term %d: order %v weights %v", i, order, w)
		}
	}
	for _, syn := range []string{stem("purchase"), stem("film")} {
		if got, ok := w[syn]; !ok || math.Abs(got-0.3) > 1e-9 {
			t.Errorf("synonym %q: weight %v (present %v), want 0.3; order %v", syn, got, ok, order)
		}
	}
	// No word adds more than maxSynonymTerms terms.
	if extra := len(order) - len(Terms(q)); extra > 3*maxSynonymTerms {
		t.Errorf("%d synonym terms for 3 words", extra)
	}
	// A query without known words is unchanged.
	order, w = expandSynonyms("zzqx", Terms("zzqx"), 0.3)
	if len(order) != 1 || len(w) != 1 {
		t.Errorf("unknown word expanded: %v", order)
	}
}

func TestNormalizeSemantic(t *testing.T) {
	mk := func() map[*kdoc]*candidate {
		return map[*kdoc]*candidate{
			{slot: 0}: {semantic: 0.2, hasSem: true},
			{slot: 1}: {semantic: 0.6, hasSem: true},
			{slot: 2}: {keyword: 1}, // no semantic signal: untouched
		}
	}
	c := mk()
	normalizeSemantic(c, NormMinMax)
	for d, x := range c {
		switch d.slot {
		case 0:
			if x.semantic != 0 || x.cosine != 0.2 {
				t.Errorf("min: %+v", x)
			}
		case 1:
			if x.semantic != 1 || x.cosine != 0.6 {
				t.Errorf("max: %+v", x)
			}
		case 2:
			if x.semantic != 0 || x.hasSem {
				t.Errorf("keyword-only: %+v", x)
			}
		}
	}
	c = mk()
	normalizeSemantic(c, NormNone)
	for d, x := range c {
		if d.slot == 1 && (x.semantic != 0.6 || x.cosine != 0.6) {
			t.Errorf("none: %+v", x)
		}
	}
}

func TestConfigSemanticNorm(t *testing.T) {
	for norm, ok := range map[string]bool{"": true, NormNone: true, NormMinMax: true, "zscore": false} {
		_, err := New(Config{Tools: staticCatalog{}, Experimental: Experimental{SemanticNorm: norm}})
		if (err == nil) != ok {
			t.Errorf("SemanticNorm %q: err %v", norm, err)
		}
	}
}

// staticCatalog is a ToolLister over fixed slices.
type staticCatalog struct {
	tools   []catalog.Tool
	servers []catalog.Server
}

func (c staticCatalog) ListTools(context.Context) ([]catalog.Tool, error)     { return c.tools, nil }
func (c staticCatalog) ListServers(context.Context) ([]catalog.Server, error) { return c.servers, nil }
