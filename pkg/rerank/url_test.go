package rerank

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// relevance is the toy cross-encoder both fake servers use: the share of
// query words found in the document.
func relevance(q, d string) float64 {
	words := strings.Fields(strings.ToLower(q))
	hit := 0
	for _, w := range words {
		if strings.Contains(strings.ToLower(d), w) {
			hit++
		}
	}
	return float64(hit) / float64(len(words))
}

type recorder struct {
	mu     sync.Mutex
	bodies []map[string]any
}

func (r *recorder) add(raw []byte) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	r.mu.Lock()
	r.bodies = append(r.bodies, m)
	r.mu.Unlock()
	return m
}

// cohereServer answers {"results":[{"index","relevance_score"}]} sorted by
// score, like Cohere /v2/rerank.
func cohereServer(t *testing.T, key string, rec *recorder) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v2/rerank" {
			t.Errorf("got %s %s", r.Method, r.URL.Path)
		}
		if got, want := r.Header.Get("Authorization"), "Bearer "+key; key != "" && got != want {
			t.Errorf("Authorization %q, want %q", got, want)
		}
		raw, _ := io.ReadAll(r.Body)
		m := rec.add(raw)
		var req cohereRequest
		_ = json.Unmarshal(raw, &req)
		type res struct {
			Index          int     `json:"index"`
			RelevanceScore float64 `json:"relevance_score"`
		}
		var out []res
		for i, d := range req.Documents {
			out = append(out, res{i, relevance(req.Query, d)})
		}
		sort.SliceStable(out, func(a, b int) bool { return out[a].RelevanceScore > out[b].RelevanceScore })
		if n, ok := m["top_n"].(float64); ok && int(n) < len(out) {
			out = out[:int(n)]
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "results": out, "meta": map[string]any{}})
	}))
}

// teiServer behaves like text-embeddings-inference /rerank: a body without
// "texts" gets 422, otherwise a bare array of {index, score}.
func teiServer(t *testing.T, rec *recorder) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/rerank" {
			t.Errorf("got %s %s", r.Method, r.URL.Path)
		}
		raw, _ := io.ReadAll(r.Body)
		rec.add(raw)
		var req struct {
			Query string    `json:"query"`
			Texts *[]string `json:"texts"`
		}
		_ = json.Unmarshal(raw, &req)
		if req.Texts == nil {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, "Failed to deserialize the JSON body into the target type: missing field `texts` at line 1 column 80")
			return
		}
		type res struct {
			Index int     `json:"index"`
			Score float64 `json:"score"`
		}
		var out []res
		for i, d := range *req.Texts {
			out = append(out, res{i, relevance(req.Query, d)})
		}
		sort.SliceStable(out, func(a, b int) bool { return out[a].Score > out[b].Score })
		_ = json.NewEncoder(w).Encode(out)
	}))
}

var docs = []string{
	"send_email: send an email message",
	"get_weather: weather forecast for a city",
	"",
	"weather_alerts: severe weather warnings for a city",
}

func TestURLCohereShape(t *testing.T) {
	rec := &recorder{}
	srv := cohereServer(t, "k-123", rec)
	defer srv.Close()
	r, err := NewURL(Config{URL: srv.URL + "/v2/rerank", Model: "rerank-v3.5", APIKey: "k-123"})
	if err != nil {
		t.Fatal(err)
	}
	scores, err := r.Rerank(context.Background(), "weather forecast city", docs)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 1, 0, 2.0 / 3}
	if !reflect.DeepEqual(scores, want) {
		t.Errorf("scores = %v, want %v (input order, blank doc 0)", scores, want)
	}
	wantBody := map[string]any{
		"model": "rerank-v3.5", "query": "weather forecast city", "top_n": float64(3),
		"documents": []any{docs[0], docs[1], docs[3]},
	}
	if len(rec.bodies) != 1 || !reflect.DeepEqual(rec.bodies[0], wantBody) {
		t.Errorf("request bodies = %v, want [%v]", rec.bodies, wantBody)
	}
}

func TestURLTEIShapeDetected(t *testing.T) {
	rec := &recorder{}
	srv := teiServer(t, rec)
	defer srv.Close()
	r, err := NewURL(Config{URL: srv.URL + "/rerank"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		scores, err := r.Rerank(context.Background(), "weather forecast city", docs)
		if err != nil {
			t.Fatal(err)
		}
		if want := []float64{0, 1, 0, 2.0 / 3}; !reflect.DeepEqual(scores, want) {
			t.Errorf("call %d: scores = %v, want %v", i, scores, want)
		}
	}
	// First call: Cohere shape (422), then TEI; second call: TEI directly.
	if len(rec.bodies) != 3 {
		t.Fatalf("%d requests, want 3: %v", len(rec.bodies), rec.bodies)
	}
	if _, ok := rec.bodies[0]["documents"]; !ok {
		t.Errorf("first request %v is not Cohere-shaped", rec.bodies[0])
	}
	wantTEI := map[string]any{"query": "weather forecast city", "texts": []any{docs[0], docs[1], docs[3]}}
	for _, b := range rec.bodies[1:] {
		if !reflect.DeepEqual(b, wantTEI) {
			t.Errorf("TEI request %v, want %v", b, wantTEI)
		}
	}
}

func TestURLPinnedTEI(t *testing.T) {
	rec := &recorder{}
	srv := teiServer(t, rec)
	defer srv.Close()
	r, _ := NewURL(Config{URL: srv.URL + "/rerank", Format: FormatTEI})
	if _, err := r.Rerank(context.Background(), "weather", docs); err != nil {
		t.Fatal(err)
	}
	if len(rec.bodies) != 1 {
		t.Errorf("%d requests, want 1 (format pinned)", len(rec.bodies))
	}
}

func TestURLErrors(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		wantErr   string
		wantCalls int
	}{
		{"malformed", 200, `{"results": [`, "malformed Cohere-shaped answer", 1},
		{"not json", 200, `<html>`, "not JSON", 1},
		{"no results", 200, `{"data": []}`, `no "results"`, 1},
		{"index out of range", 200, `{"results":[{"index":9,"relevance_score":0.5}]}`, "index 9", 1},
		{"repeated index", 200, `[{"index":0,"score":0.5},{"index":0,"score":0.4}]`, "repeated index 0", 1},
		{"no score", 200, `[{"index":0}]`, "without a score", 1},
		{"no index", 200, `[{"score":1}]`, "without an index", 1},
		{"server error with key echoed", 500, `internal error for key sk-9`, "500 Internal Server Error: internal error for key [redacted]", 3},
		{"overloaded is retried", 503, `busy`, "503", 3},
		{"unauthorized", 401, `{"message":"invalid api token"}`, "invalid api token", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls++
				w.WriteHeader(tc.status)
				fmt.Fprint(w, tc.body)
			}))
			defer srv.Close()
			r, _ := NewURL(Config{URL: srv.URL + "/rerank", APIKey: "sk-9", Format: FormatCohere})
			r.(*urlReranker).client.SetSleep(func(ctx context.Context, d time.Duration) error { return nil })
			_, err := r.Rerank(context.Background(), "q", []string{"a", "b"})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want it to contain %q", err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "sk-9") {
				t.Errorf("error leaks the key: %v", err)
			}
			if calls != tc.wantCalls {
				t.Errorf("calls = %d, want %d", calls, tc.wantCalls)
			}
		})
	}
}

func TestURLShortlistLimitAndEdgeCases(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		fmt.Fprint(w, `[]`)
	}))
	defer srv.Close()
	r, _ := NewURL(Config{URL: srv.URL + "/rerank", Format: FormatTEI})
	_, err := r.Rerank(context.Background(), "q", make([]string, MaxDocs+1))
	if err == nil || !strings.Contains(err.Error(), "51 documents exceed the shortlist limit of 50") {
		t.Errorf("err = %v", err)
	}
	if _, err := r.Rerank(context.Background(), "  ", []string{"a"}); err == nil {
		t.Error("empty query: want an error")
	}
	s, err := r.Rerank(context.Background(), "q", nil)
	if err != nil || len(s) != 0 {
		t.Errorf("no docs: %v %v", s, err)
	}
	s, err = r.Rerank(context.Background(), "q", []string{"", " "})
	if err != nil || !reflect.DeepEqual(s, []float64{0, 0}) {
		t.Errorf("blank docs: %v %v", s, err)
	}
	if calls != 0 {
		t.Errorf("%d calls, want none", calls)
	}
	// Results the server leaves out score 0.
	s, err = r.Rerank(context.Background(), "q", []string{"a", "b"})
	if err != nil || !reflect.DeepEqual(s, []float64{0, 0}) {
		t.Errorf("omitted results: %v %v", s, err)
	}
}

func TestURLTimeout(t *testing.T) {
	srv := testenv.HangingServer(t)
	r, _ := NewURL(Config{URL: srv.URL + "/rerank", Format: FormatTEI, Timeout: 30 * time.Millisecond})
	var slept []time.Duration
	r.(*urlReranker).client.SetSleep(func(ctx context.Context, d time.Duration) error { slept = append(slept, d); return nil })
	_, err := r.Rerank(context.Background(), "q", []string{"a"})
	if err == nil || !strings.Contains(err.Error(), "did not answer within 30ms") {
		t.Errorf("err = %v", err)
	}
	// Backoff from 200ms with equal jitter: [100ms, 200ms], then [200ms, 400ms].
	if len(slept) != 2 || slept[0] < 100*time.Millisecond || slept[0] > 200*time.Millisecond ||
		slept[1] < 200*time.Millisecond || slept[1] > 400*time.Millisecond {
		t.Errorf("backoff %v, want two waits in [100ms, 200ms] and [200ms, 400ms]", slept)
	}
}
