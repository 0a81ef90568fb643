// Package rerank scores a shortlist of tool documents against a query with
// a cross-encoder: Amazon Bedrock Rerank (amazon.rerank-v1:0,
// cohere.rerank-v3-5:0) or a Cohere- or TEI-shaped /rerank endpoint. The
// retriever calls it on its top candidates only (at most MaxDocs).
package rerank

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/toolrag/mcp-gateway/internal/duration"
)

// MaxDocs is the largest shortlist a Reranker accepts.
const MaxDocs = 50

// Reranker scores docs against query. The result has one score per doc, in
// the order of docs; higher is more relevant. Scores are comparable within
// one call only.
type Reranker interface {
	Rerank(ctx context.Context, query string, docs []string) ([]float64, error)
}

// Provider names accepted in Config.Provider and TOOL_RAG_RERANKER.
const (
	ProviderOff     = "off"
	ProviderBedrock = "bedrock"
	ProviderURL     = "url"
)

// Bedrock reranking models.
const (
	BedrockAmazonRerank = "amazon.rerank-v1:0"
	BedrockCohereRerank = "cohere.rerank-v3-5:0"
)

// Wire formats of a url reranker.
const (
	FormatAuto   = ""       // try Cohere, fall back to TEI when the server rejects it
	FormatCohere = "cohere" // {"model","query","documents","top_n"} → {"results":[{"index","relevance_score"}]}
	FormatTEI    = "tei"    // {"query","texts"} → [{"index","score"}]
)

// Config selects and configures a reranker.
type Config struct {
	// Provider is off (the default when empty), bedrock or url.
	Provider string

	// URL is the full /rerank endpoint of a url reranker, e.g.
	// http://127.0.0.1:8080/rerank (TEI) or https://api.cohere.com/v2/rerank.
	URL string
	// Model is sent as "model" in the Cohere format (omitted when empty).
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <APIKey>".
	APIKey string
	// Format pins the wire format (FormatCohere or FormatTEI); empty detects it.
	Format string

	// BedrockModel is amazon.rerank-v1:0 (default), cohere.rerank-v3-5:0 or
	// a full model ARN.
	BedrockModel string
	// Region overrides the SDK default region (it goes into the model ARN).
	Region string
	// BedrockClient defaults to a client from the SDK default configuration.
	BedrockClient RerankAPI

	// Timeout bounds each call (default 10s).
	Timeout time.Duration
}

// New builds the reranker cfg describes. It returns a nil Reranker and no
// error when the provider is off.
func New(ctx context.Context, cfg Config) (Reranker, error) {
	switch cfg.Provider {
	case "", ProviderOff:
		return nil, nil
	case ProviderURL:
		return NewURL(cfg)
	case ProviderBedrock:
		return NewBedrock(ctx, cfg)
	default:
		return nil, fmt.Errorf("rerank: unknown provider %q (want off, bedrock or url)", cfg.Provider)
	}
}

// ConfigFromEnv reads the reranker settings through getenv (os.Getenv in
// production). An invalid value gives an error naming the variable.
//
//	TOOL_RAG_RERANKER                off (default) | bedrock | url
//	TOOL_RAG_RERANKER_URL            url: full /rerank endpoint
//	TOOL_RAG_RERANKER_MODEL          url: model name sent in the Cohere format
//	TOOL_RAG_RERANKER_API_KEY        url: bearer token (optional)
//	TOOL_RAG_RERANKER_FORMAT         url: cohere | tei (default: detected)
//	TOOL_RAG_RERANKER_BEDROCK_MODEL  bedrock: amazon.rerank-v1:0 (default) | cohere.rerank-v3-5:0 | model ARN
//	TOOL_RAG_RERANKER_TIMEOUT        per-call timeout, "10s" or seconds (default 10s)
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	cfg := Config{
		URL:          get("TOOL_RAG_RERANKER_URL"),
		Model:        get("TOOL_RAG_RERANKER_MODEL"),
		APIKey:       get("TOOL_RAG_RERANKER_API_KEY"),
		Format:       strings.ToLower(get("TOOL_RAG_RERANKER_FORMAT")),
		BedrockModel: get("TOOL_RAG_RERANKER_BEDROCK_MODEL"),
		Timeout:      10 * time.Second,
	}
	switch p := strings.ToLower(get("TOOL_RAG_RERANKER")); p {
	case "", ProviderOff, "0", "false", "none":
		cfg.Provider = ProviderOff
	case ProviderBedrock, ProviderURL:
		cfg.Provider = p
	case "local":
		return Config{}, fmt.Errorf("TOOL_RAG_RERANKER=local is not available: run a cross-encoder behind text-embeddings-inference and set TOOL_RAG_RERANKER=url with TOOL_RAG_RERANKER_URL, or use bedrock")
	default:
		return Config{}, fmt.Errorf("TOOL_RAG_RERANKER=%q is not one of off, bedrock, url", p)
	}
	switch cfg.Format {
	case FormatAuto, FormatCohere, FormatTEI:
	default:
		return Config{}, fmt.Errorf("TOOL_RAG_RERANKER_FORMAT=%q is not one of cohere, tei", cfg.Format)
	}
	if s := get("TOOL_RAG_RERANKER_TIMEOUT"); s != "" {
		d, err := duration.Parse(s)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("TOOL_RAG_RERANKER_TIMEOUT=%q is not a positive duration such as 10s or a number of seconds", s)
		}
		cfg.Timeout = d
	}
	if cfg.BedrockModel == "" {
		cfg.BedrockModel = BedrockAmazonRerank
	}
	if err := validBedrockModel(cfg.BedrockModel); err != nil {
		return Config{}, fmt.Errorf("TOOL_RAG_RERANKER_BEDROCK_MODEL=%q: %w", cfg.BedrockModel, err)
	}
	if cfg.Provider == ProviderURL && cfg.URL == "" {
		return Config{}, fmt.Errorf("TOOL_RAG_RERANKER_URL is required when TOOL_RAG_RERANKER=url")
	}
	return cfg, nil
}

func checkShortlist(docs []string) error {
	if len(docs) > MaxDocs {
		return fmt.Errorf("rerank: %d documents exceed the shortlist limit of %d", len(docs), MaxDocs)
	}
	return nil
}
