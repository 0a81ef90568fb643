package rerank

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/toolrag/mcp-gateway/internal/redact"
	"github.com/toolrag/mcp-gateway/pkg/jsonhttp"
)

type urlReranker struct {
	cfg    Config
	client *jsonhttp.Client
	// format is the detected or pinned wire format (FormatCohere/FormatTEI,
	// or "" until detected).
	format atomic.Value
}

// NewURL returns a reranker for a Cohere-shaped (Cohere, Jina, vLLM,
// Infinity) or TEI-shaped (text-embeddings-inference) /rerank endpoint.
// Without cfg.Format the first call sends the Cohere shape and switches to
// TEI for good if the server rejects it with 400 or 422.
func NewURL(cfg Config) (Reranker, error) {
	if !strings.HasPrefix(cfg.URL, "http://") && !strings.HasPrefix(cfg.URL, "https://") {
		return nil, fmt.Errorf("rerank: endpoint %q must be a full http:// or https:// URL (TOOL_RAG_RERANKER_URL)", cfg.URL)
	}
	switch cfg.Format {
	case FormatAuto, FormatCohere, FormatTEI:
	default:
		return nil, fmt.Errorf("rerank: format %q is not one of cohere, tei", cfg.Format)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	// Two retries, from 200ms, at most 2s apart: a reranker is on the
	// path of every find_tools.
	r := &urlReranker{cfg: cfg, client: jsonhttp.New(jsonhttp.Config{Name: "rerank", URL: cfg.URL, APIKey: cfg.APIKey,
		Timeout: cfg.Timeout, MaxRetries: 2, RetryBaseDelay: 200 * time.Millisecond, MaxRetryDelay: 2 * time.Second})}
	r.format.Store(cfg.Format)
	return r, nil
}

type cohereRequest struct {
	Model     string   `json:"model,omitempty"`
	Query     string   `json:"query"`
	Documents []string `json:"documents"`
	TopN      int      `json:"top_n"`
}

type teiRequest struct {
	Query string   `json:"query"`
	Texts []string `json:"texts"`
}

// result covers both answer shapes: Cohere's relevance_score and TEI's score.
type result struct {
	Index          *int     `json:"index"`
	RelevanceScore *float64 `json:"relevance_score"`
	Score          *float64 `json:"score"`
}

func (r *urlReranker) Rerank(ctx context.Context, query string, docs []string) ([]float64, error) {
	if err := checkShortlist(docs); err != nil {
		return nil, err
	}
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("rerank: the query is empty")
	}
	scores := make([]float64, len(docs))
	var sent []string
	var pos []int
	for i, d := range docs {
		if strings.TrimSpace(d) == "" {
			continue // blank documents score 0
		}
		sent = append(sent, d)
		pos = append(pos, i)
	}
	if len(sent) == 0 {
		return scores, nil
	}
	format := r.format.Load().(string)
	try := format
	if try == FormatAuto {
		try = FormatCohere
	}
	raw, err := r.client.Post(ctx, r.body(try, query, sent))
	var se *jsonhttp.StatusError
	if format == FormatAuto && errors.As(err, &se) && (se.Code == http.StatusBadRequest || se.Code == http.StatusUnprocessableEntity) {
		// A TEI server answers the Cohere shape with 422 (missing "texts").
		if raw2, err2 := r.client.Post(ctx, r.body(FormatTEI, query, sent)); err2 == nil {
			try, raw, err = FormatTEI, raw2, nil
		}
	}
	if err != nil {
		return nil, err
	}
	results, err := parseResults(raw)
	if err != nil {
		return nil, fmt.Errorf("rerank: %s: %w: %s", r.cfg.URL, err, redact.Snippet(raw, r.cfg.APIKey))
	}
	seen := make([]bool, len(sent))
	for _, res := range results {
		if res.Index == nil {
			return nil, fmt.Errorf("rerank: %s returned a result without an index", r.cfg.URL)
		}
		i := *res.Index
		if i < 0 || i >= len(sent) || seen[i] {
			return nil, fmt.Errorf("rerank: %s returned an invalid or repeated index %d for %d documents", r.cfg.URL, i, len(sent))
		}
		seen[i] = true
		switch {
		case res.RelevanceScore != nil:
			scores[pos[i]] = *res.RelevanceScore
		case res.Score != nil:
			scores[pos[i]] = *res.Score
		default:
			return nil, fmt.Errorf("rerank: %s returned a result without a score (index %d)", r.cfg.URL, i)
		}
	}
	if format == FormatAuto {
		r.format.CompareAndSwap(FormatAuto, try)
	}
	return scores, nil
}

// parseResults detects the answer shape: an object with "results" (Cohere)
// or a bare array (TEI).
func parseResults(raw []byte) ([]result, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return nil, errors.New("empty answer")
	}
	switch trimmed[0] {
	case '[':
		var rs []result
		if err := json.Unmarshal(trimmed, &rs); err != nil {
			return nil, fmt.Errorf("malformed TEI-shaped answer (%v)", err)
		}
		return rs, nil
	case '{':
		var obj struct {
			Results *[]result `json:"results"`
		}
		if err := json.Unmarshal(trimmed, &obj); err != nil {
			return nil, fmt.Errorf("malformed Cohere-shaped answer (%v)", err)
		}
		if obj.Results == nil {
			return nil, errors.New(`answer has no "results"`)
		}
		return *obj.Results, nil
	default:
		return nil, errors.New("answer is not JSON")
	}
}

func (r *urlReranker) body(format, query string, docs []string) []byte {
	var v any
	if format == FormatTEI {
		v = teiRequest{Query: query, Texts: docs}
	} else {
		v = cohereRequest{Model: r.cfg.Model, Query: query, Documents: docs, TopN: len(docs)}
	}
	b, _ := json.Marshal(v) // strings only: cannot fail
	return b
}
