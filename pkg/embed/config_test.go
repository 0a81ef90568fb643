package embed

import (
	"context"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

func TestConfigFromEnv(t *testing.T) {
	defaults := Config{
		Provider: ProviderBuiltin,
		URL:      URLConfig{Model: DefaultURLModel, BatchSize: 64, Timeout: 30 * time.Second},
		Bedrock:  BedrockConfig{ModelID: DefaultBedrockModel, Dim: 1024, Concurrency: 8, Timeout: 30 * time.Second},
	}
	// with is the defaults changed by set.
	with := func(set func(c *Config)) Config {
		c := defaults
		set(&c)
		return c
	}
	testenv.CheckFromEnv(t, ConfigFromEnv, []testenv.EnvCase[Config]{
		{Name: "empty gives builtin", Want: with(func(c *Config) {})},
		{Name: "local alias", Env: map[string]string{"TOOL_RAG_EMBEDDER": "local"}, Want: with(func(c *Config) {})},
		{Name: "url full", Env: map[string]string{
			"TOOL_RAG_EMBEDDER": "url", "TOOL_RAG_EMBED_URL": "http://127.0.0.1:11434/v1/embeddings",
			"TOOL_RAG_EMBED_MODEL": "qwen3", "TOOL_RAG_EMBED_API_KEY": "k", "TOOL_RAG_EMBED_DIM": "1024",
			"TOOL_RAG_EMBED_BATCH": "16", "TOOL_RAG_EMBED_TIMEOUT": "2.5", "TOOL_RAG_EMBED_QUERY_INSTRUCTION": "Find the tool",
		}, Want: with(func(c *Config) {
			c.Provider = ProviderURL
			c.QueryInstruction = "Find the tool"
			c.URL = URLConfig{Endpoint: "http://127.0.0.1:11434/v1/embeddings", Model: "qwen3", APIKey: "k", Dim: 1024, BatchSize: 16, Timeout: 2500 * time.Millisecond}
			c.Bedrock.Timeout = 2500 * time.Millisecond
		})},
		{Name: "api alias and duration", Env: map[string]string{"TOOL_RAG_EMBEDDER": "API", "TOOL_RAG_EMBED_URL": "https://x/v1/embeddings", "TOOL_RAG_EMBED_TIMEOUT": "1m"},
			Want: with(func(c *Config) {
				c.Provider = ProviderURL
				c.URL.Endpoint = "https://x/v1/embeddings"
				c.URL.Timeout = time.Minute
				c.Bedrock.Timeout = time.Minute
			})},
		{Name: "bedrock", Env: map[string]string{"TOOL_RAG_EMBEDDER": "bedrock", "TOOL_RAG_BEDROCK_DIM": "512", "TOOL_RAG_BEDROCK_CONCURRENCY": "2", "TOOL_RAG_BEDROCK_MODEL_ID": "eu.amazon.titan-embed-text-v2:0"},
			Want: with(func(c *Config) {
				c.Provider = ProviderBedrock
				c.Bedrock.Dim, c.Bedrock.Concurrency, c.Bedrock.ModelID = 512, 2, "eu.amazon.titan-embed-text-v2:0"
			})},
		{Name: "model2vec", Env: map[string]string{"TOOL_RAG_EMBEDDER": "model2vec", "TOOL_RAG_MODEL2VEC_PATH": "s3://b/p"},
			Want: with(func(c *Config) { c.Provider = ProviderModel2Vec; c.Model2Vec.Path = "s3://b/p" })},
		{Name: "unknown provider", Env: map[string]string{"TOOL_RAG_EMBEDDER": "openai"}, WantErr: "TOOL_RAG_EMBEDDER"},
		{Name: "url without endpoint", Env: map[string]string{"TOOL_RAG_EMBEDDER": "url"}, WantErr: "TOOL_RAG_EMBED_URL"},
		{Name: "bad dim", Env: map[string]string{"TOOL_RAG_EMBED_DIM": "big"}, WantErr: "TOOL_RAG_EMBED_DIM"},
		{Name: "zero dim", Env: map[string]string{"TOOL_RAG_EMBED_DIM": "0"}, WantErr: "TOOL_RAG_EMBED_DIM"},
		{Name: "bad batch", Env: map[string]string{"TOOL_RAG_EMBED_BATCH": "-1"}, WantErr: "TOOL_RAG_EMBED_BATCH"},
		{Name: "bad timeout", Env: map[string]string{"TOOL_RAG_EMBED_TIMEOUT": "soon"}, WantErr: "TOOL_RAG_EMBED_TIMEOUT"},
		{Name: "negative timeout", Env: map[string]string{"TOOL_RAG_EMBED_TIMEOUT": "-3"}, WantErr: "TOOL_RAG_EMBED_TIMEOUT"},
		{Name: "bedrock dim", Env: map[string]string{"TOOL_RAG_BEDROCK_DIM": "768"}, WantErr: "TOOL_RAG_BEDROCK_DIM"},
		{Name: "bedrock concurrency", Env: map[string]string{"TOOL_RAG_BEDROCK_CONCURRENCY": "0"}, WantErr: "TOOL_RAG_BEDROCK_CONCURRENCY"},
		{Name: "model2vec without path", Env: map[string]string{"TOOL_RAG_EMBEDDER": "model2vec"}, WantErr: "TOOL_RAG_MODEL2VEC_PATH"},
	})
}

func TestNewProviders(t *testing.T) {
	ctx := context.Background()
	e, err := New(ctx, Config{})
	if err != nil || e.ModelID() != NewBuiltin().ModelID() {
		t.Errorf("default provider: %v %v", e, err)
	}
	if _, err := New(ctx, Config{Provider: "nope"}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown provider: err = %v", err)
	}
	if _, err := New(ctx, Config{Provider: ProviderModel2Vec}); err == nil {
		t.Error("model2vec without a path: want an error")
	}
}

// The query instruction wraps queries only; documents go out raw.
func TestQueryInstruction(t *testing.T) {
	f := &fakeEmbeddings{t: t, dim: 3}
	srv := httptest.NewServer(f)
	defer srv.Close()
	e, err := New(context.Background(), Config{
		Provider:         ProviderURL,
		QueryInstruction: "Given a task, retrieve the tool that performs it",
		URL:              URLConfig{Endpoint: srv.URL + "/v1/embeddings", Model: "test-model", Dim: 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.EmbedQuery(context.Background(), "weather in Paris"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.EmbedDocuments(context.Background(), []string{"get_weather: forecast"}); err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"Instruct: Given a task, retrieve the tool that performs it\nQuery: weather in Paris"},
		{"get_weather: forecast"},
	}
	if got := f.calls(); !reflect.DeepEqual(got, want) {
		t.Errorf("sent %q, want %q", got, want)
	}
	if e.ModelID() != "url:test-model:3" {
		t.Errorf("the instruction must not change ModelID: %q", e.ModelID())
	}
	if WithQueryInstruction(NewBuiltin(), "") == nil {
		t.Error("empty instruction must return the embedder")
	}
}
