package retrieve_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// topicEmbedder maps a text to (weather, email, other) word counts,
// normalised: a tiny embedder whose cosines can be worked out by hand.
type topicEmbedder struct{}

func (topicEmbedder) vec(text string) []float32 {
	v := make([]float32, 3)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		switch strings.Trim(w, ".,") {
		case "weather", "forecast":
			v[0]++
		case "email", "mail":
			v[1]++
		}
	}
	if v[0] == 0 && v[1] == 0 {
		v[2] = 1
	}
	n := float32(math.Sqrt(float64(v[0]*v[0] + v[1]*v[1] + v[2]*v[2])))
	for i := range v {
		v[i] /= n
	}
	return v
}
func (e topicEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = e.vec(t)
	}
	return out, nil
}
func (e topicEmbedder) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	return e.vec(text), nil
}
func (topicEmbedder) Dim() int        { return 3 }
func (topicEmbedder) ModelID() string { return "topic-test" }

// A multi-step request takes, per tool, the best cosine of the whole
// request and its steps (unless SemanticWholeOnly).
func TestSemanticSteps(t *testing.T) {
	c := &memCatalog{servers: []catalog.Server{{ID: "w", Status: catalog.StatusActive}, {ID: "m", Status: catalog.StatusActive}}}
	for _, tl := range []catalog.Tool{
		{Server: "w", Name: "get_forecast", Description: "weather forecast"},
		{Server: "m", Name: "send", Description: "send an email"},
	} {
		catalog.Finalize(&tl)
		c.tools = append(c.tools, tl)
	}
	emb := topicEmbedder{}
	ix := buildIndex(t, c, emb)
	query := "Check the weather in Oslo, then email the plan to Kai"
	for _, tc := range []struct {
		wholeOnly bool
		want      string
	}{
		{false, "semantic=1.000"},
		{true, "semantic=0.707"},
	} {
		r := newRetriever(t, retrieve.Config{Tools: c, Index: ix, Embedder: emb, Experimental: retrieve.Experimental{SemanticWholeOnly: tc.wholeOnly, ServerWeight: -1}})
		resp, err := r.Retrieve(context.Background(), retrieve.Request{Query: query, TopK: 5, Policy: policy.Unrestricted()})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) != 2 {
			t.Fatalf("whole only %v: %d results", tc.wholeOnly, len(resp.Results))
		}
		for _, res := range resp.Results {
			if !strings.Contains(res.Reason, tc.want) {
				t.Errorf("whole only %v: %s reason %q, want %s", tc.wholeOnly, res.Tool.ID, res.Reason, tc.want)
			}
		}
	}
}
