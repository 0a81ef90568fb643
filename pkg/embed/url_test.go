package embed

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// fakeEmbeddings is an OpenAI-shaped /v1/embeddings server. Each text
// embeds to [len(text), 1, 0, ...] (dim components), so tests can tell
// which vector belongs to which input. Answers can be scripted per call.
type fakeEmbeddings struct {
	t      *testing.T
	dim    int
	key    string
	mu     sync.Mutex
	inputs [][]string
	// script, when set, answers call n (0-based); returning handled=false
	// falls through to the normal answer.
	script   func(n int, w http.ResponseWriter, r *http.Request) (handled bool)
	shuffled bool // answer with indices in reverse order
}

func (f *fakeEmbeddings) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	n := len(f.inputs)
	f.inputs = append(f.inputs, nil)
	f.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		f.t.Errorf("got %s %s, want POST /v1/embeddings", r.Method, r.URL.Path)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		f.t.Errorf("Content-Type = %q", ct)
	}
	wantAuth := ""
	if f.key != "" {
		wantAuth = "Bearer " + f.key
	}
	if got := r.Header.Get("Authorization"); got != wantAuth {
		f.t.Errorf("Authorization = %q, want %q", got, wantAuth)
	}
	raw, _ := io.ReadAll(r.Body)
	// The exact request shape: only "model" and "input".
	var generic map[string]json.RawMessage
	if err := json.Unmarshal(raw, &generic); err != nil {
		f.t.Errorf("request is not JSON: %v", err)
	}
	if len(generic) != 2 || generic["model"] == nil || generic["input"] == nil {
		f.t.Errorf("request %s: want exactly the keys model and input", raw)
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	_ = json.Unmarshal(raw, &req)
	if req.Model != "test-model" {
		f.t.Errorf("model = %q, want test-model", req.Model)
	}
	f.mu.Lock()
	f.inputs[n] = req.Input
	f.mu.Unlock()
	if f.script != nil && f.script(n, w, r) {
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	}
	var data []item
	for i, s := range req.Input {
		v := make([]float32, f.dim)
		v[0] = float32(len(s))
		v[1] = 1
		data = append(data, item{"embedding", v, i})
	}
	if f.shuffled {
		for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
			data[i], data[j] = data[j], data[i]
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1},
	})
}

func (f *fakeEmbeddings) calls() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.inputs...)
}

func newURLTest(t *testing.T, f *fakeEmbeddings, cfg URLConfig) (*urlEmbedder, *[]time.Duration) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg.Endpoint = srv.URL + "/v1/embeddings"
	if cfg.Model == "" {
		cfg.Model = "test-model"
	}
	cfg.APIKey = f.key
	if cfg.Dim == 0 {
		cfg.Dim = f.dim
	}
	e, err := NewURL(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ue := e.(*urlEmbedder)
	var sleeps []time.Duration
	ue.client.SetSleep(func(ctx context.Context, d time.Duration) error { sleeps = append(sleeps, d); return ctx.Err() })
	return ue, &sleeps
}

func unit(a, b float64) (float32, float32) {
	n := math.Sqrt(a*a + b*b)
	return float32(a / n), float32(b / n)
}

func TestURLBatchingOrderAndNormalisation(t *testing.T) {
	f := &fakeEmbeddings{t: t, dim: 3, key: "sk-test", shuffled: true}
	e, _ := newURLTest(t, f, URLConfig{BatchSize: 2})
	texts := []string{"a", "bb", "", "ccc", "dddd", "eeeee"}
	vecs, err := e.EmbedDocuments(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"a", "bb"}, {"ccc", "dddd"}, {"eeeee"}}
	if got := f.calls(); !reflect.DeepEqual(got, want) {
		t.Errorf("batches = %q, want %q (blank text not sent)", got, want)
	}
	for i, s := range texts {
		if s == "" {
			if norm(vecs[i]) != 0 {
				t.Errorf("blank text: want the zero vector, got %v", vecs[i])
			}
			continue
		}
		x, y := unit(float64(len(s)), 1)
		if math.Abs(float64(vecs[i][0]-x)) > 1e-6 || math.Abs(float64(vecs[i][1]-y)) > 1e-6 || vecs[i][2] != 0 {
			t.Errorf("text %q: got %v, want [%v %v 0] (sorted by index, unit length)", s, vecs[i], x, y)
		}
	}
	if e.ModelID() != "url:test-model:3" || e.Dim() != 3 {
		t.Errorf("ModelID %q Dim %d", e.ModelID(), e.Dim())
	}
}

func TestURLProbesDimension(t *testing.T) {
	f := &fakeEmbeddings{t: t, dim: 5}
	srv := httptest.NewServer(f)
	defer srv.Close()
	e, err := NewURL(context.Background(), URLConfig{Endpoint: srv.URL + "/v1/embeddings", Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Dim() != 5 {
		t.Errorf("Dim = %d, want 5 (probed)", e.Dim())
	}
	if got := f.calls(); len(got) != 1 || len(got[0]) != 1 {
		t.Errorf("probe calls = %q, want one call with one text", got)
	}
}

func TestURLProbeFailureNamesVariable(t *testing.T) {
	f := &fakeEmbeddings{t: t, dim: 5, script: func(n int, w http.ResponseWriter, r *http.Request) bool {
		http.Error(w, `{"error":"model not found"}`, http.StatusNotFound)
		return true
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	_, err := NewURL(context.Background(), URLConfig{Endpoint: srv.URL + "/v1/embeddings", Model: "test-model"})
	if err == nil || !strings.Contains(err.Error(), "TOOL_RAG_EMBED_DIM") || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "model not found") {
		t.Errorf("err = %v, want a probe error with the status, body and TOOL_RAG_EMBED_DIM", err)
	}
}

func TestURLRetries(t *testing.T) {
	tests := []struct {
		name       string
		script     func(n int, w http.ResponseWriter) bool
		maxRetries int
		maxDelay   time.Duration
		wantCalls  int
		wantErr    []string // substrings; nil means success
		wantSleeps func(t *testing.T, s []time.Duration)
	}{
		{
			name: "429 with Retry-After then 500 then success",
			script: func(n int, w http.ResponseWriter) bool {
				switch n {
				case 0:
					w.Header().Set("Retry-After", "2")
					http.Error(w, "slow down", http.StatusTooManyRequests)
					return true
				case 1:
					http.Error(w, "boom", http.StatusInternalServerError)
					return true
				}
				return false
			},
			maxDelay:  5 * time.Second,
			wantCalls: 3,
			wantSleeps: func(t *testing.T, s []time.Duration) {
				if len(s) != 2 || s[0] != 2*time.Second {
					t.Fatalf("sleeps = %v, want [2s (Retry-After), backoff]", s)
				}
				// second retry: base 10ms << 1 = 20ms, equal jitter → [10ms, 20ms]
				if s[1] < 10*time.Millisecond || s[1] > 20*time.Millisecond {
					t.Errorf("backoff %v outside [10ms, 20ms]", s[1])
				}
			},
		},
		{
			name: "Retry-After capped by MaxRetryDelay",
			script: func(n int, w http.ResponseWriter) bool {
				if n == 0 {
					w.Header().Set("Retry-After", "3600")
					http.Error(w, "later", http.StatusServiceUnavailable)
					return true
				}
				return false
			},
			maxDelay:  time.Second,
			wantCalls: 2,
			wantSleeps: func(t *testing.T, s []time.Duration) {
				if len(s) != 1 || s[0] != time.Second {
					t.Errorf("sleeps = %v, want [1s] (cap)", s)
				}
			},
		},
		{
			name: "gives up after MaxRetries and hides the key",
			script: func(n int, w http.ResponseWriter) bool {
				http.Error(w, "upstream overloaded for key sk-secret", http.StatusBadGateway)
				return true
			},
			maxRetries: 2,
			wantCalls:  3,
			wantErr:    []string{"502", "upstream overloaded", "[redacted]", "3 attempts"},
		},
		{
			name: "400 is not retried",
			script: func(n int, w http.ResponseWriter) bool {
				http.Error(w, `{"error":{"message":"input too long"}}`, http.StatusBadRequest)
				return true
			},
			wantCalls: 1,
			wantErr:   []string{"400", "input too long"},
		},
		{
			name: "401 is not retried",
			script: func(n int, w http.ResponseWriter) bool {
				http.Error(w, "bad key", http.StatusUnauthorized)
				return true
			},
			wantCalls: 1,
			wantErr:   []string{"401", "bad key"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeEmbeddings{t: t, dim: 2, key: "sk-secret", script: func(n int, w http.ResponseWriter, r *http.Request) bool {
				return tc.script(n, w)
			}}
			e, sleeps := newURLTest(t, f, URLConfig{MaxRetries: tc.maxRetries, RetryBaseDelay: 10 * time.Millisecond, MaxRetryDelay: tc.maxDelay})
			_, err := e.EmbedQuery(context.Background(), "hello")
			if got := len(f.calls()); got != tc.wantCalls {
				t.Errorf("calls = %d, want %d", got, tc.wantCalls)
			}
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
			} else {
				if err == nil {
					t.Fatal("want an error")
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not mention %q", err, s)
					}
				}
				if strings.Contains(err.Error(), "sk-secret") {
					t.Errorf("error leaks the API key: %v", err)
				}
			}
			if tc.wantSleeps != nil {
				tc.wantSleeps(t, *sleeps)
			}
		})
	}
}

func TestURLTimeout(t *testing.T) {
	// hang blocks the first call until the client gives up (or the test
	// ends: the release is registered after the server, so it runs first).
	hang := func(t *testing.T) func(n int, w http.ResponseWriter, r *http.Request) bool {
		wait := testenv.Hang(t)
		return func(n int, w http.ResponseWriter, r *http.Request) bool {
			if n == 0 {
				wait(r)
				return true
			}
			return false
		}
	}
	t.Run("retried", func(t *testing.T) {
		f := &fakeEmbeddings{t: t, dim: 2}
		e, sleeps := newURLTest(t, f, URLConfig{Timeout: 50 * time.Millisecond, RetryBaseDelay: time.Millisecond})
		f.script = hang(t)
		if _, err := e.EmbedQuery(context.Background(), "hello"); err != nil {
			t.Fatalf("want success on the second attempt, got %v", err)
		}
		if len(f.calls()) != 2 || len(*sleeps) != 1 {
			t.Errorf("calls %d sleeps %d, want 2 and 1", len(f.calls()), len(*sleeps))
		}
	})
	t.Run("no retries", func(t *testing.T) {
		f := &fakeEmbeddings{t: t, dim: 2}
		e, _ := newURLTest(t, f, URLConfig{Timeout: 50 * time.Millisecond, MaxRetries: -1})
		f.script = hang(t)
		_, err := e.EmbedQuery(context.Background(), "hello")
		if err == nil || !strings.Contains(err.Error(), "did not answer within 50ms") {
			t.Errorf("err = %v, want a timeout error", err)
		}
	})
	t.Run("caller cancels", func(t *testing.T) {
		f := &fakeEmbeddings{t: t, dim: 2}
		e, _ := newURLTest(t, f, URLConfig{Timeout: time.Minute})
		f.script = hang(t)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := e.EmbedQuery(ctx, "hello")
		if err == nil || len(f.calls()) != 1 {
			t.Errorf("err = %v calls = %d, want an error after one call", err, len(f.calls()))
		}
	})
}

func TestURLBadAnswers(t *testing.T) {
	tests := []struct {
		name, body string
		dim        int
		want       string
	}{
		{"not JSON", `<html>gateway</html>`, 2, "malformed JSON"},
		{"too few", `{"data":[{"embedding":[1,2],"index":0}]}`, 2, "1 embeddings for 2 inputs"},
		{"repeated index", `{"data":[{"embedding":[1,2],"index":0},{"embedding":[1,2],"index":0}]}`, 2, "repeated index 0"},
		{"index out of range", `{"data":[{"embedding":[1,2],"index":0},{"embedding":[1,2],"index":7}]}`, 2, "index 7"},
		{"ragged", `{"data":[{"embedding":[1,2],"index":0},{"embedding":[1,2,3],"index":1}]}`, 2, "different lengths"},
		{"empty embedding", `{"data":[{"embedding":[],"index":0},{"embedding":[1],"index":1}]}`, 2, "empty embedding"},
		{"dimension mismatch", `{"data":[{"embedding":[1,2,3],"index":0},{"embedding":[1,2,3],"index":1}]}`, 2, "3-dimensional vectors, want 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeEmbeddings{t: t, dim: tc.dim, script: func(n int, w http.ResponseWriter, r *http.Request) bool {
				fmt.Fprint(w, tc.body)
				return true
			}}
			e, _ := newURLTest(t, f, URLConfig{})
			_, err := e.EmbedDocuments(context.Background(), []string{"one", "two"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
			if len(f.calls()) != 1 {
				t.Errorf("a bad answer was retried (%d calls)", len(f.calls()))
			}
		})
	}
}

func TestURLMissingIndexUsesPosition(t *testing.T) {
	f := &fakeEmbeddings{t: t, dim: 2, script: func(n int, w http.ResponseWriter, r *http.Request) bool {
		fmt.Fprint(w, `{"data":[{"embedding":[1,0]},{"embedding":[0,1]}]}`)
		return true
	}}
	e, _ := newURLTest(t, f, URLConfig{})
	v, err := e.EmbedDocuments(context.Background(), []string{"one", "two"})
	if err != nil {
		t.Fatal(err)
	}
	if v[0][0] != 1 || v[1][1] != 1 {
		t.Errorf("got %v", v)
	}
}

func TestNewURLValidates(t *testing.T) {
	for _, ep := range []string{"", "localhost:11434/v1/embeddings", "ftp://x"} {
		if _, err := NewURL(context.Background(), URLConfig{Endpoint: ep, Dim: 3}); err == nil {
			t.Errorf("endpoint %q: want an error", ep)
		}
	}
}
