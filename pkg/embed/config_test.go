package embed

import (
	"context"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigFromEnv(t *testing.T) {
	defaults := Config{
		Provider: ProviderBuiltin,
		URL:      URLConfig{Model: DefaultURLModel, BatchSize: 64, Timeout: 30 * time.Second},
		Bedrock:  BedrockConfig{ModelID: DefaultBedrockModel, Dim: 1024, Concurrency: 8, Timeout: 30 * time.Second},
	}
	tests := []struct {
		name    string
		env     map[string]string
		want    func(c *Config)
		wantErr string
	}{
		{name: "empty gives builtin", env: nil, want: func(c *Config) {}},
		{name: "local alias", env: map[string]string{"TOOL_RAG_EMBEDDER": "local"}, want: func(c *Config) {}},
		{name: "url full", env: map[string]string{
			"TOOL_RAG_EMBEDDER": "url", "TOOL_RAG_EMBED_URL": "http://127.0.0.1:11434/v1/embeddings",
			"TOOL_RAG_EMBED_MODEL": "qwen3", "TOOL_RAG_EMBED_API_KEY": "k", "TOOL_RAG_EMBED_DIM": "1024",
			"TOOL_RAG_EMBED_BATCH": "16", "TOOL_RAG_EMBED_TIMEOUT": "2.5", "TOOL_RAG_EMBED_QUERY_INSTRUCTION": "Find the tool",
		}, want: func(c *Config) {
			c.Provider = ProviderURL
			c.QueryInstruction = "Find the tool"
			c.URL = URLConfig{Endpoint: "http://127.0.0.1:11434/v1/embeddings", Model: "qwen3", APIKey: "k", Dim: 1024, BatchSize: 16, Timeout: 2500 * time.Millisecond}
			c.Bedrock.Timeout = 2500 * time.Millisecond
		}},
		{name: "api alias and duration", env: map[string]string{"TOOL_RAG_EMBEDDER": "API", "TOOL_RAG_EMBED_URL": "https://x/v1/embeddings", "TOOL_RAG_EMBED_TIMEOUT": "1m"},
			want: func(c *Config) {
				c.Provider = ProviderURL
				c.URL.Endpoint = "https://x/v1/embeddings"
				c.URL.Timeout = time.Minute
				c.Bedrock.Timeout = time.Minute
			}},
		{name: "bedrock", env: map[string]string{"TOOL_RAG_EMBEDDER": "bedrock", "TOOL_RAG_BEDROCK_DIM": "512", "TOOL_RAG_BEDROCK_CONCURRENCY": "2", "TOOL_RAG_BEDROCK_MODEL_ID": "eu.amazon.titan-embed-text-v2:0"},
			want: func(c *Config) {
				c.Provider = ProviderBedrock
				c.Bedrock.Dim, c.Bedrock.Concurrency, c.Bedrock.ModelID = 512, 2, "eu.amazon.titan-embed-text-v2:0"
			}},
		{name: "model2vec", env: map[string]string{"TOOL_RAG_EMBEDDER": "model2vec", "TOOL_RAG_MODEL2VEC_PATH": "s3://b/p"},
			want: func(c *Config) { c.Provider = ProviderModel2Vec; c.Model2Vec.Path = "s3://b/p" }},
		{name: "unknown provider", env: map[string]string{"TOOL_RAG_EMBEDDER": "openai"}, wantErr: "TOOL_RAG_EMBEDDER"},
		{name: "url without endpoint", env: map[string]string{"TOOL_RAG_EMBEDDER": "url"}, wantErr: "TOOL_RAG_EMBED_URL"},
		{name: "bad dim", env: map[string]string{"TOOL_RAG_EMBED_DIM": "big"}, wantErr: "TOOL_RAG_EMBED_DIM"},
		{name: "zero dim", env: map[string]string{"TOOL_RAG_EMBED_DIM": "0"}, wantErr: "TOOL_RAG_EMBED_DIM"},
		{name: "bad batch", env: map[string]string{"TOOL_RAG_EMBED_BATCH": "-1"}, wantErr: "TOOL_RAG_EMBED_BATCH"},
		{name: "bad timeout", env: map[string]string{"TOOL_RAG_EMBED_TIMEOUT": "soon"}, wantErr: "TOOL_RAG_EMBED_TIMEOUT"},
		{name: "negative timeout", env: map[string]string{"TOOL_RAG_EMBED_TIMEOUT": "-3"}, wantErr: "TOOL_RAG_EMBED_TIMEOUT"},
		{name: "bedrock dim", env: map[string]string{"TOOL_RAG_BEDROCK_DIM": "768"}, wantErr: "TOOL_RAG_BEDROCK_DIM"},
		{name: "bedrock concurrency", env: map[string]string{"TOOL_RAG_BEDROCK_CONCURRENCY": "0"}, wantErr: "TOOL_RAG_BEDROCK_CONCURRENCY"},
		{name: "model2vec without path", env: map[string]string{"TOOL_RAG_EMBEDDER": "model2vec"}, wantErr: "TOOL_RAG_MODEL2VEC_PATH"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ConfigFromEnv(envOf(tc.env))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to name %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := defaults
			tc.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
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
