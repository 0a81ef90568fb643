package lambdahttp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestJSONStringLen(t *testing.T) {
	for _, s := range []string{"", "plain", `"quoted" \ back`, "tab\tnl\ncr\r", "\b\f\x01\x1f", "<a href=x>&amp;</a>",
		"é 中文 🙂", "line\u2028para\u2029", strings.Repeat("<", 1000)} {
		want, _ := json.Marshal(s)
		if got := jsonStringLen([]byte(s)); got != len(want) {
			t.Errorf("jsonStringLen(%q) = %d, json.Marshal gives %d", s, got, len(want))
		}
	}
}

func TestResponse(t *testing.T) {
	big := strings.Repeat("x", 500)
	h := Response(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := w.(http.Flusher); !ok {
			t.Error("the handler's writer is not an http.Flusher (mcp-go would not answer with SSE)")
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Upstream", "kept when it fits")
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(r.URL.Query().Get("n")))
		if r.URL.Query().Get("n") == "big" {
			_, _ = w.Write([]byte(big))
		}
	}), envelope+300)
	cases := []struct {
		name, query, body string
		status            int
		want              string
	}{
		{"fits", "n=ok", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, http.StatusAccepted, "ok"},
		{"tool call", "n=big", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}`, http.StatusOK, `"id":7,"jsonrpc":"2.0","result":{"content":[{"text":"result of `},
		{"other method", "n=big", `{"jsonrpc":"2.0","id":"a","method":"resources/read"}`, http.StatusOK, `"error":{"code":-32603,"message":"result of `},
		{"REST", "n=big", `{"query":"x"}`, http.StatusBadGateway, `{"error":"result of `},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder() // an http.Flusher
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp?"+c.query, strings.NewReader(c.body)))
			if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.want) {
				t.Fatalf("status %d body %q; want %d containing %q", rec.Code, rec.Body.String(), c.status, c.want)
			}
			if c.status != http.StatusAccepted && (rec.Header().Get("X-Upstream") != "" || rec.Header().Get("Content-Type") != "application/json") {
				t.Errorf("replacement headers %v", rec.Header())
			}
		})
	}
}

func TestBudget(t *testing.T) {
	ctx, cancel := Budget(context.Background(), time.Second)
	defer cancel()
	if _, ok := ctx.Deadline(); ok {
		t.Fatal("a context without a deadline got one")
	}
	parent, pcancel := context.WithTimeout(context.Background(), time.Hour)
	defer pcancel()
	pd, _ := parent.Deadline()
	ctx, cancel = Budget(parent, 3*time.Second)
	defer cancel()
	if d, _ := ctx.Deadline(); !d.Equal(pd.Add(-3 * time.Second)) {
		t.Fatalf("deadline %v, want the parent's minus 3s (%v)", d, pd.Add(-3*time.Second))
	}
	short, scancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer scancel()
	ctx, cancel = Budget(short, time.Second)
	defer cancel()
	<-ctx.Done()
	err := budgetError(ctx, time.Second, 0, errors.New("upstream did not answer"))
	if !strings.Contains(err.Error(), "upstream did not answer") || !strings.Contains(err.Error(), "AWS Lambda") ||
		!strings.Contains(err.Error(), "params.task") || !strings.Contains(err.Error(), "streamed front door") {
		t.Fatalf("budgetError: %v", err)
	}
	if err := budgetError(context.Background(), time.Second, 0, errors.New("plain")); err.Error() != "plain" {
		t.Fatalf("an error not caused by the budget was rewritten: %v", err)
	}
}

func TestAnswerBy(t *testing.T) {
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	deadline := start.Add(8*time.Second + 29*time.Second) // init took 8 s, then a 29 s invocation
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	for _, c := range []struct {
		name  string
		ctx   context.Context
		first bool
		want  time.Time
	}{
		{"first invocation after a slow init: API Gateway's clock", ctx, true, start.Add(28 * time.Second)},
		{"later invocation: its own deadline", ctx, false, deadline.Add(-time.Second)},
		{"no deadline, first", context.Background(), true, start.Add(28 * time.Second)},
		{"no deadline, later", context.Background(), false, time.Time{}},
	} {
		if got := AnswerBy(c.ctx, start, c.first, FrontTimeout, time.Second); !got.Equal(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// A writer that cannot flush stays one: mcp-go then refuses a GET stream
// (405) instead of holding the invocation open.
func TestResponseKeepsNoFlusher(t *testing.T) {
	h := Response(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := w.(http.Flusher); ok {
			t.Error("the handler's writer is an http.Flusher over one that is not")
		}
	}), 0)
	h.ServeHTTP(noFlush{httptest.NewRecorder()}, httptest.NewRequest(http.MethodGet, "/mcp", nil))
}

type noFlush struct{ http.ResponseWriter }

// TestWithBudget: an Upstreams call runs within the invocation's deadline
// minus the margin; one that Budget stops says so (and how long it had),
// while an answer or an error of its own passes through.
func TestWithBudget(t *testing.T) {
	u := Upstreams{Margin: time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 1200*time.Millisecond)
	defer cancel()
	_, err := withBudget(ctx, u, func(ctx context.Context) (int, error) {
		<-ctx.Done()
		return 0, context.Cause(ctx)
	})
	if err == nil || !strings.Contains(err.Error(), "stop 1s before it (this one had ") {
		t.Errorf("a call past the budget: %v", err)
	}
	n, err := withBudget(ctx, u, func(context.Context) (int, error) { return 7, nil })
	if n != 7 || err != nil {
		t.Errorf("a call within the budget: %d, %v", n, err)
	}
	own := errors.New("tool failed")
	if _, err := withBudget(context.Background(), u, func(context.Context) (int, error) { return 0, own }); err != own {
		t.Errorf("the call's own error: %v", err)
	}
}
