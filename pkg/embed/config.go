package embed

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/toolrag/mcp-gateway/internal/duration"
)

// Provider names accepted in Config.Provider and TOOL_RAG_EMBEDDER.
const (
	ProviderBuiltin   = "builtin"
	ProviderURL       = "url"
	ProviderBedrock   = "bedrock"
	ProviderModel2Vec = "model2vec"
)

// Config selects and configures an embedder. Only the section of the chosen
// provider is read.
type Config struct {
	// Provider is builtin (the default when empty), url, bedrock or model2vec.
	Provider string
	// QueryInstruction, when set, wraps queries as
	// "Instruct: <QueryInstruction>\nQuery: <query>" for instruction-tuned
	// models; documents are embedded as they are. It is query-side only, so
	// it does not change ModelID and needs no reindex.
	QueryInstruction string

	URL       URLConfig
	Bedrock   BedrockConfig
	Model2Vec Model2VecConfig
}

// New builds the embedder cfg describes. Remote providers are contacted
// only when needed: url probes the dimension when URL.Dim is 0, model2vec
// loads (and downloads) the model, bedrock only validates its settings.
func New(ctx context.Context, cfg Config) (Embedder, error) {
	var (
		e   Embedder
		err error
	)
	switch cfg.Provider {
	case "", ProviderBuiltin, "local":
		e = NewBuiltin()
	case ProviderURL, "api":
		e, err = NewURL(ctx, cfg.URL)
	case ProviderBedrock:
		e, err = NewBedrock(ctx, cfg.Bedrock)
	case ProviderModel2Vec:
		e, err = NewModel2Vec(ctx, cfg.Model2Vec)
	default:
		return nil, fmt.Errorf("embed: unknown provider %q (want builtin, url, bedrock or model2vec)", cfg.Provider)
	}
	if err != nil {
		return nil, err
	}
	return WithQueryInstruction(e, cfg.QueryInstruction), nil
}

// ConfigFromEnv reads the embedder settings from environment variables
// through getenv (os.Getenv in production). An invalid value gives an error
// naming the variable.
//
//	TOOL_RAG_EMBEDDER                 builtin (default; alias local) | url (alias api) | bedrock | model2vec
//	TOOL_RAG_EMBED_URL                url: full embeddings endpoint, e.g. http://127.0.0.1:11434/v1/embeddings
//	TOOL_RAG_EMBED_MODEL              url: model name (default text-embedding-3-small)
//	TOOL_RAG_EMBED_API_KEY            url: bearer token (optional)
//	TOOL_RAG_EMBED_DIM                url: expected dimension (unset: probed once at startup)
//	TOOL_RAG_EMBED_QUERY_INSTRUCTION  any: query prefix for instruction-tuned models
//	TOOL_RAG_EMBED_BATCH              url: texts per request (default 64)
//	TOOL_RAG_EMBED_TIMEOUT            url, bedrock: per-request timeout, "30s" or seconds (default 30s)
//	TOOL_RAG_BEDROCK_MODEL_ID         bedrock: default amazon.titan-embed-text-v2:0
//	TOOL_RAG_BEDROCK_DIM              bedrock: 256 | 512 | 1024 (default 1024)
//	TOOL_RAG_BEDROCK_CONCURRENCY      bedrock: parallel InvokeModel calls (default 8)
//	TOOL_RAG_MODEL2VEC_PATH           model2vec: model directory or s3://bucket/prefix
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	var cfg Config
	switch p := strings.ToLower(get("TOOL_RAG_EMBEDDER")); p {
	case "", ProviderBuiltin, "local":
		cfg.Provider = ProviderBuiltin
	case ProviderURL, "api":
		cfg.Provider = ProviderURL
	case ProviderBedrock, ProviderModel2Vec:
		cfg.Provider = p
	default:
		return Config{}, fmt.Errorf("TOOL_RAG_EMBEDDER=%q is not one of builtin, local, url, api, bedrock, model2vec", p)
	}
	cfg.QueryInstruction = get("TOOL_RAG_EMBED_QUERY_INSTRUCTION")

	timeout, err := envDuration(get, "TOOL_RAG_EMBED_TIMEOUT", 30*time.Second)
	if err != nil {
		return Config{}, err
	}

	cfg.URL = URLConfig{
		Endpoint: get("TOOL_RAG_EMBED_URL"),
		Model:    get("TOOL_RAG_EMBED_MODEL"),
		APIKey:   get("TOOL_RAG_EMBED_API_KEY"),
		Timeout:  timeout,
	}
	if cfg.URL.Model == "" {
		cfg.URL.Model = DefaultURLModel
	}
	if cfg.URL.Dim, err = envInt(get, "TOOL_RAG_EMBED_DIM", 0, 1); err != nil {
		return Config{}, err
	}
	if cfg.URL.BatchSize, err = envInt(get, "TOOL_RAG_EMBED_BATCH", DefaultBatchSize, 1); err != nil {
		return Config{}, err
	}
	if cfg.Provider == ProviderURL && cfg.URL.Endpoint == "" {
		return Config{}, fmt.Errorf("TOOL_RAG_EMBED_URL is required when TOOL_RAG_EMBEDDER=url (the full endpoint, e.g. http://127.0.0.1:11434/v1/embeddings)")
	}

	cfg.Bedrock = BedrockConfig{ModelID: get("TOOL_RAG_BEDROCK_MODEL_ID"), Timeout: timeout}
	if cfg.Bedrock.ModelID == "" {
		cfg.Bedrock.ModelID = DefaultBedrockModel
	}
	if cfg.Bedrock.Dim, err = envInt(get, "TOOL_RAG_BEDROCK_DIM", 1024, 1); err != nil {
		return Config{}, err
	}
	if !validTitanDim(cfg.Bedrock.Dim) {
		return Config{}, fmt.Errorf("TOOL_RAG_BEDROCK_DIM=%d is not one of 256, 512, 1024", cfg.Bedrock.Dim)
	}
	if cfg.Bedrock.Concurrency, err = envInt(get, "TOOL_RAG_BEDROCK_CONCURRENCY", 8, 1); err != nil {
		return Config{}, err
	}

	cfg.Model2Vec = Model2VecConfig{Path: get("TOOL_RAG_MODEL2VEC_PATH")}
	if cfg.Provider == ProviderModel2Vec && cfg.Model2Vec.Path == "" {
		return Config{}, fmt.Errorf("TOOL_RAG_MODEL2VEC_PATH is required when TOOL_RAG_EMBEDDER=model2vec (a model directory or s3://bucket/prefix)")
	}
	return cfg, nil
}

func envInt(get func(string) string, key string, def, minimum int) (int, error) {
	s := get(key)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < minimum {
		return 0, fmt.Errorf("%s=%q is not an integer >= %d", key, s, minimum)
	}
	return n, nil
}

// envDuration accepts a Go duration ("30s", "1m30s") or a number of seconds.
func envDuration(get func(string) string, key string, def time.Duration) (time.Duration, error) {
	s := get(key)
	if s == "" {
		return def, nil
	}
	d, err := duration.Parse(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q is not a positive duration such as 30s or a number of seconds", key, s)
	}
	return d, nil
}

// WithQueryInstruction wraps e so that queries are embedded as
// "Instruct: <instruction>\nQuery: <query>"; documents pass unchanged. An
// empty instruction returns e itself.
func WithQueryInstruction(e Embedder, instruction string) Embedder {
	if instruction == "" {
		return e
	}
	return &instructed{Embedder: e, instruction: instruction}
}

type instructed struct {
	Embedder
	instruction string
}

func (i *instructed) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	return i.Embedder.EmbedQuery(ctx, "Instruct: "+i.instruction+"\nQuery: "+text)
}
