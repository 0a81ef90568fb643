package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/toolrag/mcp-gateway/internal/redact"
	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
	"github.com/toolrag/mcp-gateway/pkg/jsonhttp"
)

// Defaults of the url embedder.
const (
	DefaultURLModel  = "text-embedding-3-small"
	DefaultBatchSize = 64
)

// URLConfig configures an OpenAI-shaped embeddings endpoint
// (POST {"model", "input": [...]} → {"data": [{"embedding", "index"}]}),
// such as OpenAI, Ollama, vLLM, LM Studio or text-embeddings-inference.
type URLConfig struct {
	// Endpoint is the full URL, e.g. http://127.0.0.1:11434/v1/embeddings.
	Endpoint string
	// Model is sent as "model" (default text-embedding-3-small).
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <APIKey>".
	APIKey string
	// Dim is the expected dimension; 0 probes it with one request at startup.
	Dim int
	// BatchSize is the number of texts per request (default 64).
	BatchSize int
	// Timeout bounds each HTTP attempt (default 30s).
	Timeout time.Duration
	// MaxRetries is the number of retries after a 429, a 5xx, a network
	// error or a timeout (default 4; negative disables retries).
	MaxRetries int
	// RetryBaseDelay is the first backoff delay, doubled per retry
	// (default 500ms). A Retry-After header takes precedence.
	RetryBaseDelay time.Duration
	// MaxRetryDelay caps any single wait, Retry-After included (default 20s).
	MaxRetryDelay time.Duration
	// HTTPClient defaults to a client without an overall timeout (Timeout
	// applies per attempt).
	HTTPClient *http.Client
}

type urlEmbedder struct {
	cfg    URLConfig
	dim    int
	client *jsonhttp.Client
}

// NewURL returns an embedder for an OpenAI-shaped embeddings endpoint. When
// cfg.Dim is 0 it embeds one probe text to learn the dimension, so the
// endpoint must be reachable.
func NewURL(ctx context.Context, cfg URLConfig) (Embedder, error) {
	if cfg.Endpoint == "" {
		return nil, errors.New("embed: the url embedder needs an endpoint (TOOL_RAG_EMBED_URL)")
	}
	if !strings.HasPrefix(cfg.Endpoint, "http://") && !strings.HasPrefix(cfg.Endpoint, "https://") {
		return nil, fmt.Errorf("embed: endpoint %q must start with http:// or https://", cfg.Endpoint)
	}
	if cfg.Model == "" {
		cfg.Model = DefaultURLModel
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 4
	}
	e := &urlEmbedder{cfg: cfg, dim: cfg.Dim, client: jsonhttp.New(jsonhttp.Config{
		Name: "embed", URL: cfg.Endpoint, APIKey: cfg.APIKey, Timeout: cfg.Timeout, MaxRetries: cfg.MaxRetries,
		RetryBaseDelay: cfg.RetryBaseDelay, MaxRetryDelay: cfg.MaxRetryDelay, MaxResponseBytes: 256 << 20,
		HTTPClient: cfg.HTTPClient,
	})}
	if e.dim == 0 {
		vecs, err := e.request(ctx, []string{"dimension probe"})
		if err != nil {
			return nil, fmt.Errorf("embed: probing the dimension of model %q at %s (set TOOL_RAG_EMBED_DIM to skip): %w", cfg.Model, cfg.Endpoint, err)
		}
		e.dim = len(vecs[0])
	}
	return e, nil
}

func (e *urlEmbedder) Dim() int { return e.dim }

func (e *urlEmbedder) ModelID() string { return fmt.Sprintf("url:%s:%d", e.cfg.Model, e.dim) }

func (e *urlEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := e.EmbedDocuments(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return v[0], nil
}

// EmbedDocuments sends the texts in batches of BatchSize. Blank texts are
// not sent; they get the zero vector.
func (e *urlEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var (
		batch []string
		pos   []int
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		vecs, err := e.request(ctx, batch)
		if err != nil {
			return err
		}
		for j, v := range vecs {
			if len(v) != e.dim {
				return fmt.Errorf("embed: model %q at %s returned %d-dimensional vectors, want %d (check TOOL_RAG_EMBED_DIM)", e.cfg.Model, e.cfg.Endpoint, len(v), e.dim)
			}
			out[pos[j]] = v
		}
		batch, pos = batch[:0], pos[:0]
		return nil
	}
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			out[i] = make([]float32, e.dim)
			continue
		}
		batch = append(batch, t)
		pos = append(pos, i)
		if len(batch) == e.cfg.BatchSize {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

type embeddingsRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embeddingsResponse struct {
	Data []struct {
		Embedding []float32 `json:"embedding"`
		Index     *int      `json:"index"`
	} `json:"data"`
}

// request embeds one batch (with the client's retries) and returns unit
// vectors in input order. A malformed answer is not retried.
func (e *urlEmbedder) request(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingsRequest{Model: e.cfg.Model, Input: texts})
	if err != nil {
		return nil, fmt.Errorf("embed: encoding the request: %w", err)
	}
	raw, err := e.client.Post(ctx, body)
	if err != nil {
		return nil, err
	}
	n := len(texts)
	var parsed embeddingsResponse
	if err := json.Unmarshal(raw, &parsed); err != nil {
		return nil, fmt.Errorf("embed: %s answered with malformed JSON (%v): %s", e.cfg.Endpoint, err, redact.Snippet(raw, e.cfg.APIKey))
	}
	if len(parsed.Data) != n {
		return nil, fmt.Errorf("embed: %s returned %d embeddings for %d inputs", e.cfg.Endpoint, len(parsed.Data), n)
	}
	vecs := make([][]float32, n)
	for i, d := range parsed.Data {
		idx := i
		if d.Index != nil {
			idx = *d.Index
		}
		if idx < 0 || idx >= n || vecs[idx] != nil {
			return nil, fmt.Errorf("embed: %s returned an invalid or repeated index %d for %d inputs", e.cfg.Endpoint, idx, n)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embed: %s returned an empty embedding at index %d", e.cfg.Endpoint, idx)
		}
		if len(d.Embedding) != len(parsed.Data[0].Embedding) {
			return nil, fmt.Errorf("embed: %s returned vectors of different lengths (%d and %d)", e.cfg.Endpoint, len(parsed.Data[0].Embedding), len(d.Embedding))
		}
		vindex.Normalize(d.Embedding)
		vecs[idx] = d.Embedding
	}
	return vecs, nil
}
