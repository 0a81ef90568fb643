package lambdahttp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// echoHandler answers with the method, path and body it got, and whether
// its writer can flush (mcp-go streams a POST answer only then).
var echoHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	_, flusher := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, r.Method+" "+r.URL.Path+" flush="+map[bool]string{true: "yes", false: "no"}[flusher]+" "+string(body))
})

func fixture(t *testing.T, name string) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "events", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Each front end's event reaches the handler and its answer comes back
// in that front end's shape; anything else is a clear error.
func TestDispatch(t *testing.T) {
	h := Dispatch(echoHandler, Options{})
	for _, tc := range []struct {
		name, event string
		raw         json.RawMessage
		want        string // in the answer's body
		wantErr     string
	}{
		{name: "http api", event: "http-api-tools-list.json", want: "POST /mcp flush=yes"},
		{name: "rest api", event: "rest-api-initialize.json", want: "POST /mcp flush=yes"},
		{name: "function url", event: "function-url-initialize.json"},
		{name: "eventbridge", event: "schedule-sync.json", wantErr: "unsupported event"},
		{name: "not json", raw: json.RawMessage(`[1,`), wantErr: "not a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := tc.raw
			if tc.event != "" {
				raw = fixture(t, tc.event)
			}
			out, err := h(context.Background(), raw)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var body string
			switch r := out.(type) {
			case events.APIGatewayV2HTTPResponse:
				body = r.Body
			case events.APIGatewayProxyResponse:
				body = r.Body
			case *events.LambdaFunctionURLStreamingResponse:
				b, _ := io.ReadAll(r.Body)
				body = string(b)
			default:
				t.Fatalf("answer of type %T", out)
			}
			if !strings.Contains(body, tc.want) || !strings.HasPrefix(body, "POST /") {
				t.Errorf("body %q, want %q", body, tc.want)
			}
		})
	}
}

// A GET (a listening stream) reaches the handler without a Flush, so
// mcp-go refuses it; subscriptions/listen is refused by the gateway
// (Config.NoClientStreams, TestLambdaEndToEnd).
func TestStreamsRefused(t *testing.T) {
	h := withFlush(echoHandler)
	var req *http.Request
	var w *recorder
	req, _ = http.NewRequest(http.MethodGet, "/mcp", http.NoBody)
	w = &recorder{header: http.Header{}}
	h.ServeHTTP(w, req)
	if w.body.String() != "GET /mcp flush=no " {
		t.Errorf("GET answer %q", w.body.String())
	}
}

// A GET /mcp (a listening stream) through a buffered front door is
// answered 405 by mcp-go, with the Allow header RFC 9110 requires; a
// handler's own Allow is kept.
func TestMethodNotAllowedHasAllow(t *testing.T) {
	mcpLike := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/own" {
			w.Header().Set("Allow", "GET")
		}
		http.Error(w, "Streaming unsupported", http.StatusMethodNotAllowed)
	})
	h := Dispatch(mcpLike, Options{})
	for _, tc := range []struct{ path, want string }{{"/mcp", "POST, DELETE"}, {"/own", "GET"}} {
		var ev map[string]any
		if err := json.Unmarshal(fixture(t, "http-api-initialize.json"), &ev); err != nil {
			t.Fatal(err)
		}
		ev["rawPath"] = tc.path
		ev["body"] = ""
		ev["requestContext"].(map[string]any)["http"].(map[string]any)["method"] = "GET"
		ev["requestContext"].(map[string]any)["http"].(map[string]any)["path"] = tc.path
		raw, _ := json.Marshal(ev)
		out, err := h(context.Background(), raw)
		if err != nil {
			t.Fatal(err)
		}
		r := out.(events.APIGatewayV2HTTPResponse)
		allow := r.Headers["Allow"]
		if allow == "" && len(r.MultiValueHeaders["Allow"]) > 0 {
			allow = r.MultiValueHeaders["Allow"][0]
		}
		if r.StatusCode != http.StatusMethodNotAllowed || allow != tc.want {
			t.Errorf("GET %s: status %d Allow %q; want 405 with Allow %q", tc.path, r.StatusCode, allow, tc.want)
		}
	}
}

// recorder is a ResponseWriter without Flush, like the Lambda adapters'.
type recorder struct {
	header http.Header
	body   strings.Builder
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(int)             {}
