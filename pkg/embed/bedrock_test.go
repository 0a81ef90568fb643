package embed

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// fakeTitan speaks the Bedrock InvokeModel wire format for Titan Text
// Embeddings V2. Text "word×k" embeds to a vector whose first component is
// len(text) and second 1, padded to the requested dimensions.
type fakeTitan struct {
	t        *testing.T
	model    string
	calls    atomic.Int32
	inflight testenv.InFlight
	gate     chan struct{} // when set, each call waits for a token
	mu       sync.Mutex
	texts    []string
	script   func(n int, w http.ResponseWriter, r *http.Request) bool
	dimDelta int // answer with dimensions+dimDelta components
}

func (f *fakeTitan) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(f.calls.Add(1)) - 1
	defer f.inflight.Enter()()
	if f.gate != nil {
		<-f.gate
	}
	wantPath := "/model/" + f.model + "/invoke"
	if r.Method != http.MethodPost || r.URL.Path != wantPath {
		f.t.Errorf("got %s %s, want POST %s", r.Method, r.URL.Path, wantPath)
	}
	if got := r.URL.EscapedPath(); got != "/model/"+strings.ReplaceAll(f.model, ":", "%3A")+"/invoke" {
		f.t.Errorf("escaped path %q: the model id must be path-escaped", got)
	}
	for h, want := range map[string]string{"Content-Type": "application/json", "Accept": "application/json"} {
		if got := r.Header.Get(h); got != want {
			f.t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	if auth := r.Header.Get("Authorization"); !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || !strings.Contains(auth, "/us-east-1/bedrock/aws4_request") {
		f.t.Errorf("Authorization = %q, want a SigV4 signature for bedrock in us-east-1", auth)
	}
	if r.Header.Get("X-Amz-Date") == "" {
		f.t.Error("X-Amz-Date missing")
	}
	raw, _ := io.ReadAll(r.Body)
	var generic map[string]json.RawMessage
	if err := json.Unmarshal(raw, &generic); err != nil || len(generic) != 3 {
		f.t.Errorf("body %s: want exactly inputText, dimensions, normalize", raw)
	}
	var req struct {
		InputText  string `json:"inputText"`
		Dimensions int    `json:"dimensions"`
		Normalize  *bool  `json:"normalize"`
	}
	_ = json.Unmarshal(raw, &req)
	if req.Normalize == nil || !*req.Normalize {
		f.t.Errorf("body %s: want normalize true", raw)
	}
	f.mu.Lock()
	f.texts = append(f.texts, req.InputText)
	f.mu.Unlock()
	if f.script != nil && f.script(n, w, r) {
		return
	}
	v := make([]float32, req.Dimensions+f.dimDelta)
	v[0] = float32(len(req.InputText))
	v[1] = 1
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Bedrock-Input-Token-Count", "3")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"embedding":           v,
		"inputTextTokenCount": 3,
		"embeddingsByType":    map[string]any{"float": v},
	})
}

func newBedrockTest(t *testing.T, f *fakeTitan, cfg BedrockConfig) Embedder {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	client := bedrockruntime.New(bedrockruntime.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDTEST", "SECRET", ""),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 3
			o.RateLimiter = ratelimit.None
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		}),
	})
	cfg.Client = client
	if cfg.ModelID == "" {
		cfg.ModelID = f.model
	}
	e, err := NewBedrock(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestBedrockEmbedsWithBoundedConcurrency(t *testing.T) {
	f := &fakeTitan{t: t, model: DefaultBedrockModel, gate: make(chan struct{})}
	e := newBedrockTest(t, f, BedrockConfig{Dim: 256, Concurrency: 3})
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = strings.Repeat("x", i+1)
	}
	texts[4] = " " // blank: not sent
	done := make(chan struct{})
	var vecs [][]float32
	var err error
	go func() { vecs, err = e.EmbedDocuments(context.Background(), texts); close(done) }()
	for i := 0; i < 9; i++ {
		f.gate <- struct{}{}
	}
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if got := f.calls.Load(); got != 9 {
		t.Errorf("calls = %d, want 9 (one per non-blank text)", got)
	}
	if m := f.inflight.Max(); m > 3 || m < 1 {
		t.Errorf("max concurrent calls = %d, want 1..3", m)
	}
	for i, s := range texts {
		if len(vecs[i]) != 256 {
			t.Fatalf("text %d: %d dims", i, len(vecs[i]))
		}
		if i == 4 {
			if norm(vecs[i]) != 0 {
				t.Error("blank text: want the zero vector")
			}
			continue
		}
		x, y := unit(float64(len(s)), 1)
		if abs32(vecs[i][0]-x) > 1e-6 || abs32(vecs[i][1]-y) > 1e-6 {
			t.Errorf("text %d: got %v…, want [%v %v …] in input order, unit length", i, vecs[i][:2], x, y)
		}
	}
	if e.ModelID() != "bedrock:amazon.titan-embed-text-v2:0:256" || e.Dim() != 256 {
		t.Errorf("ModelID %q Dim %d", e.ModelID(), e.Dim())
	}
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

func TestBedrockErrors(t *testing.T) {
	tests := []struct {
		name      string
		script    func(n int, w http.ResponseWriter) bool
		dimDelta  int
		wantCalls int32
		wantErr   string // "" = success
	}{
		{"throttled then ok", func(n int, w http.ResponseWriter) bool {
			if n == 0 {
				w.Header().Set("X-Amzn-ErrorType", "ThrottlingException")
				w.WriteHeader(http.StatusTooManyRequests)
				fmt.Fprint(w, `{"message":"Too many requests, please wait before trying again."}`)
				return true
			}
			return false
		}, 0, 2, ""},
		{"500 then ok", func(n int, w http.ResponseWriter) bool {
			if n == 0 {
				w.Header().Set("X-Amzn-ErrorType", "InternalServerException")
				w.WriteHeader(http.StatusInternalServerError)
				fmt.Fprint(w, `{"message":"internal"}`)
				return true
			}
			return false
		}, 0, 2, ""},
		{"throttled until the SDK gives up", func(n int, w http.ResponseWriter) bool {
			w.Header().Set("X-Amzn-ErrorType", "ThrottlingException")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"message":"Too many requests"}`)
			return true
		}, 0, 3, "ThrottlingException"},
		{"access denied is not retried", func(n int, w http.ResponseWriter) bool {
			w.Header().Set("X-Amzn-ErrorType", "AccessDeniedException")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message":"You don't have access to the model with the specified model ID."}`)
			return true
		}, 0, 1, "access to the model"},
		{"malformed body", func(n int, w http.ResponseWriter) bool {
			fmt.Fprint(w, `{"embedding": [0.1, `)
			return true
		}, 0, 1, "malformed JSON"},
		{"dimension mismatch", nil, 2, 1, "258-dimensional embedding, want 256"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeTitan{t: t, model: DefaultBedrockModel, dimDelta: tc.dimDelta}
			if tc.script != nil {
				f.script = func(n int, w http.ResponseWriter, r *http.Request) bool { return tc.script(n, w) }
			}
			e := newBedrockTest(t, f, BedrockConfig{Dim: 256})
			v, err := e.EmbedQuery(context.Background(), "hello")
			if got := f.calls.Load(); got != tc.wantCalls {
				t.Errorf("calls = %d, want %d", got, tc.wantCalls)
			}
			if tc.wantErr == "" {
				if err != nil || len(v) != 256 {
					t.Fatalf("err %v len %d", err, len(v))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want it to mention %q", err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), DefaultBedrockModel) {
				t.Errorf("err = %v, want it to name the model", err)
			}
		})
	}
}

// The first failed call of a batch cancels the calls in flight and starts
// no more.
func TestBedrockFirstErrorStopsBatch(t *testing.T) {
	tests := []struct {
		name        string
		concurrency int
		// fail answers call n with a 400; otherwise the call waits until
		// its client gives up (or 10s).
		fail func(n int) bool
	}{
		{"every call fails, one at a time", 1, func(int) bool { return true }},
		{"the first call fails, the others hang", 4, func(n int) bool { return n == 0 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeTitan{t: t, model: DefaultBedrockModel}
			f.script = func(n int, w http.ResponseWriter, r *http.Request) bool {
				if !tc.fail(n) {
					select {
					case <-r.Context().Done():
					case <-time.After(10 * time.Second):
					}
					return true
				}
				time.Sleep(20 * time.Millisecond) // let the others start
				w.Header().Set("X-Amzn-ErrorType", "ValidationException")
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"message":"Malformed input request"}`)
				return true
			}
			e := newBedrockTest(t, f, BedrockConfig{Dim: 512, Concurrency: tc.concurrency})
			texts := make([]string, 50)
			for i := range texts {
				texts[i] = "t"
			}
			start := time.Now()
			_, err := e.EmbedDocuments(context.Background(), texts)
			if err == nil || !strings.Contains(err.Error(), "Malformed input request") {
				t.Fatalf("err = %v, want the first failure", err)
			}
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("EmbedDocuments took %v: the calls in flight were not cancelled", elapsed)
			}
			if got := f.calls.Load(); got > int32(tc.concurrency) {
				t.Errorf("%d calls, want at most %d (those in flight when the first failed)", got, tc.concurrency)
			}
			if m := f.inflight.Max(); m > int32(tc.concurrency) {
				t.Errorf("%d calls at once, want at most %d", m, tc.concurrency)
			}
		})
	}
}

// hangAll answers no call until its client gives up or the test ends;
// take it after starting the fake (see testenv.Hang).
func hangAll(t *testing.T) func(n int, w http.ResponseWriter, r *http.Request) bool {
	wait := testenv.Hang(t)
	return func(n int, w http.ResponseWriter, r *http.Request) bool { wait(r); return true }
}

func TestBedrockTimeout(t *testing.T) {
	f := &fakeTitan{t: t, model: DefaultBedrockModel}
	e := newBedrockTest(t, f, BedrockConfig{Dim: 256, Timeout: 50 * time.Millisecond})
	f.script = hangAll(t)
	_, err := e.EmbedQuery(context.Background(), "hello")
	if err == nil || !strings.Contains(err.Error(), "did not answer within 50ms") {
		t.Errorf("err = %v, want a timeout error", err)
	}
}

// With DeadlineMargin, a call stops that long before its context's
// deadline (the Lambda invocation's) even when Timeout is longer, so the
// error is returned while the caller can still answer.
func TestBedrockTimeoutCappedAtDeadline(t *testing.T) {
	f := &fakeTitan{t: t, model: DefaultBedrockModel}
	e := newBedrockTest(t, f, BedrockConfig{Dim: 256, Timeout: 30 * time.Second, DeadlineMargin: 200 * time.Millisecond})
	f.script = hangAll(t)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := e.EmbedQuery(ctx, "hello")
	if err == nil || !strings.Contains(err.Error(), "did not answer within") {
		t.Fatalf("err = %v, want a timeout error", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the call ran to the context's deadline (err %v); want it stopped DeadlineMargin before", err)
	}
}

func TestNewBedrockValidatesDim(t *testing.T) {
	for _, d := range []int{1, 128, 768, 2048} {
		_, err := NewBedrock(context.Background(), BedrockConfig{Dim: d, Client: &bedrockruntime.Client{}})
		if err == nil || !strings.Contains(err.Error(), "TOOL_RAG_BEDROCK_DIM") {
			t.Errorf("dim %d: err = %v", d, err)
		}
	}
	for _, d := range []int{0, 256, 512, 1024} {
		if _, err := NewBedrock(context.Background(), BedrockConfig{Dim: d, Client: &bedrockruntime.Client{}}); err != nil {
			t.Errorf("dim %d: %v", d, err)
		}
	}
}

func TestBedrockOtherModelPath(t *testing.T) {
	f := &fakeTitan{t: t, model: "eu.amazon.titan-embed-text-v2:0"}
	e := newBedrockTest(t, f, BedrockConfig{Dim: 512})
	if _, err := e.EmbedQuery(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
}
