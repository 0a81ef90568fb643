package rerank

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockagentruntime"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

func bedrockClient(t *testing.T, h http.Handler) *bedrockagentruntime.Client {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return bedrockagentruntime.New(bedrockagentruntime.Options{
		Region:       "us-west-2",
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDTEST", "SECRET", ""),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 2
			o.RateLimiter = ratelimit.None
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		}),
	})
}

func wantRerankBody(query, arn string, n int, texts ...string) map[string]any {
	var sources []any
	for _, s := range texts {
		sources = append(sources, map[string]any{
			"type":                 "INLINE",
			"inlineDocumentSource": map[string]any{"type": "TEXT", "textDocument": map[string]any{"text": s}},
		})
	}
	return map[string]any{
		"queries": []any{map[string]any{"type": "TEXT", "textQuery": map[string]any{"text": query}}},
		"sources": sources,
		"rerankingConfiguration": map[string]any{
			"type": "BEDROCK_RERANKING_MODEL",
			"bedrockRerankingConfiguration": map[string]any{
				"numberOfResults":    float64(n),
				"modelConfiguration": map[string]any{"modelArn": arn},
			},
		},
	}
}

func TestBedrockRerank(t *testing.T) {
	tests := []struct {
		name, model, wantARN string
	}{
		{"amazon", "", "arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0"},
		{"cohere", BedrockCohereRerank, "arn:aws:bedrock:us-west-2::foundation-model/cohere.rerank-v3-5:0"},
		{"arn", "arn:aws:bedrock:ca-central-1::foundation-model/amazon.rerank-v1:0", "arn:aws:bedrock:ca-central-1::foundation-model/amazon.rerank-v1:0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var bodies []map[string]any
			client := bedrockClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost || r.URL.Path != "/rerank" {
					t.Errorf("got %s %s, want POST /rerank", r.Method, r.URL.Path)
				}
				if ct := r.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
				if auth := r.Header.Get("Authorization"); !strings.Contains(auth, "/us-west-2/bedrock/aws4_request") {
					t.Errorf("Authorization %q: want SigV4 for bedrock in us-west-2", auth)
				}
				raw, _ := io.ReadAll(r.Body)
				var m map[string]any
				if err := json.Unmarshal(raw, &m); err != nil {
					t.Errorf("body %s: %v", raw, err)
				}
				bodies = append(bodies, m)
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"results":[{"index":1,"relevanceScore":0.91},{"index":2,"relevanceScore":0.4},{"index":0,"relevanceScore":0.002}]}`)
			}))
			r, err := New(context.Background(), Config{Provider: ProviderBedrock, BedrockModel: tc.model, BedrockClient: client})
			if err != nil {
				t.Fatal(err)
			}
			scores, err := r.Rerank(context.Background(), "weather in Paris", []string{"send email", "get weather", "", "weather alerts"})
			if err != nil {
				t.Fatal(err)
			}
			want := []float64{float64(float32(0.002)), float64(float32(0.91)), 0, float64(float32(0.4))}
			if !reflect.DeepEqual(scores, want) {
				t.Errorf("scores %v, want %v", scores, want)
			}
			wantBody := wantRerankBody("weather in Paris", tc.wantARN, 3, "send email", "get weather", "weather alerts")
			if len(bodies) != 1 || !reflect.DeepEqual(bodies[0], wantBody) {
				got, _ := json.Marshal(bodies)
				exp, _ := json.Marshal(wantBody)
				t.Errorf("request\n got %s\nwant [%s]", got, exp)
			}
		})
	}
}

func TestBedrockRerankPaging(t *testing.T) {
	calls := 0
	client := bedrockClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		raw, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		switch calls {
		case 1:
			if _, ok := m["nextToken"]; ok {
				t.Error("first call carries a nextToken")
			}
			fmt.Fprint(w, `{"results":[{"index":0,"relevanceScore":0.5}],"nextToken":"page-2"}`)
		default:
			if m["nextToken"] != "page-2" {
				t.Errorf("second call nextToken = %v", m["nextToken"])
			}
			fmt.Fprint(w, `{"results":[{"index":1,"relevanceScore":0.25}]}`)
		}
	}))
	r, _ := NewBedrock(context.Background(), Config{BedrockClient: client})
	scores, err := r.Rerank(context.Background(), "q", []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(scores, []float64{0.5, 0.25}) || calls != 2 {
		t.Errorf("scores %v after %d calls", scores, calls)
	}
}

func TestBedrockRerankErrors(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		errType   string
		body      string
		wantErr   string
		wantCalls int
	}{
		{"bad index", 200, "", `{"results":[{"index":5,"relevanceScore":0.5}]}`, "index 5", 1},
		{"repeated index", 200, "", `{"results":[{"index":0,"relevanceScore":0.5},{"index":0,"relevanceScore":0.5}]}`, "repeated index 0", 1},
		{"missing score", 200, "", `{"results":[{"index":0}]}`, "without index or score", 1},
		{"malformed", 200, "", `{"results":[`, "amazon.rerank-v1:0", 1},
		{"access denied", 403, "AccessDeniedException", `{"message":"not authorized to rerank"}`, "not authorized to rerank", 1},
		{"throttled", 429, "ThrottlingException", `{"message":"slow down"}`, "slow down", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			client := bedrockClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls++
				if tc.errType != "" {
					w.Header().Set("X-Amzn-ErrorType", tc.errType)
				}
				w.WriteHeader(tc.status)
				fmt.Fprint(w, tc.body)
			}))
			r, _ := NewBedrock(context.Background(), Config{BedrockClient: client})
			_, err := r.Rerank(context.Background(), "q", []string{"a", "b"})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want it to contain %q", err, tc.wantErr)
			}
			if calls != tc.wantCalls {
				t.Errorf("calls = %d, want %d", calls, tc.wantCalls)
			}
		})
	}
}

func TestBedrockRerankLimits(t *testing.T) {
	calls := 0
	client := bedrockClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls++ }))
	r, _ := NewBedrock(context.Background(), Config{BedrockClient: client})
	if _, err := r.Rerank(context.Background(), "q", make([]string, 60)); err == nil || !strings.Contains(err.Error(), "limit of 50") {
		t.Errorf("err = %v", err)
	}
	if s, err := r.Rerank(context.Background(), "q", []string{""}); err != nil || !reflect.DeepEqual(s, []float64{0}) {
		t.Errorf("blank docs: %v %v", s, err)
	}
	if calls != 0 {
		t.Errorf("%d calls, want 0", calls)
	}
	if _, err := NewBedrock(context.Background(), Config{BedrockModel: "amazon.titan-embed-text-v2:0", BedrockClient: client}); err == nil {
		t.Error("an embedding model as reranker: want an error")
	}
}

func TestConfigFromEnv(t *testing.T) {
	testenv.CheckFromEnv(t, ConfigFromEnv, []testenv.EnvCase[Config]{
		{Name: "default off", Want: Config{Provider: ProviderOff, BedrockModel: BedrockAmazonRerank, Timeout: 10 * time.Second}},
		{Name: "url", Env: map[string]string{"TOOL_RAG_RERANKER": "url", "TOOL_RAG_RERANKER_URL": "http://127.0.0.1:8080/rerank",
			"TOOL_RAG_RERANKER_MODEL": "bge", "TOOL_RAG_RERANKER_API_KEY": "k", "TOOL_RAG_RERANKER_FORMAT": "TEI", "TOOL_RAG_RERANKER_TIMEOUT": "2"},
			Want: Config{Provider: ProviderURL, URL: "http://127.0.0.1:8080/rerank", Model: "bge", APIKey: "k", Format: FormatTEI,
				BedrockModel: BedrockAmazonRerank, Timeout: 2 * time.Second}},
		{Name: "bedrock cohere", Env: map[string]string{"TOOL_RAG_RERANKER": "Bedrock", "TOOL_RAG_RERANKER_BEDROCK_MODEL": "cohere.rerank-v3-5:0"},
			Want: Config{Provider: ProviderBedrock, BedrockModel: BedrockCohereRerank, Timeout: 10 * time.Second}},
		{Name: "unknown", Env: map[string]string{"TOOL_RAG_RERANKER": "magic"}, WantErr: "TOOL_RAG_RERANKER="},
		{Name: "local", Env: map[string]string{"TOOL_RAG_RERANKER": "local"}, WantErr: "TOOL_RAG_RERANKER=local"},
		{Name: "url missing", Env: map[string]string{"TOOL_RAG_RERANKER": "url"}, WantErr: "TOOL_RAG_RERANKER_URL"},
		{Name: "bad model", Env: map[string]string{"TOOL_RAG_RERANKER_BEDROCK_MODEL": "cohere.rerank-v2"}, WantErr: "TOOL_RAG_RERANKER_BEDROCK_MODEL"},
		{Name: "bad format", Env: map[string]string{"TOOL_RAG_RERANKER_FORMAT": "jina"}, WantErr: "TOOL_RAG_RERANKER_FORMAT"},
		{Name: "bad timeout", Env: map[string]string{"TOOL_RAG_RERANKER_TIMEOUT": "0"}, WantErr: "TOOL_RAG_RERANKER_TIMEOUT"},
	})
}

func TestNewOffAndUnknown(t *testing.T) {
	r, err := New(context.Background(), Config{})
	if r != nil || err != nil {
		t.Errorf("off: %v %v, want nil, nil", r, err)
	}
	if _, err := New(context.Background(), Config{Provider: "x"}); err == nil {
		t.Error("unknown provider: want an error")
	}
	if _, err := New(context.Background(), Config{Provider: ProviderURL, URL: "127.0.0.1/rerank"}); err == nil {
		t.Error("URL without scheme: want an error")
	}
}
