package metrics

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestObserveTools counts the calls the handler behind names with
// NoteTool; ObserveTools itself leaves the body to that handler.
func TestObserveTools(t *testing.T) {
	tests := []struct {
		name, body, answer string
		status             int
		label              string // "" : not observed
		failed             bool
	}{
		{"find_tools ok", `{"method":"tools/call","params":{"name":"find_tools"}}`, `{"result":{}}`, 200, "find_tools", false},
		{"run_tool tool error", `{"method":"tools/call","params":{"name":"run_tool"}}`, `{"result":{"isError":true}}`, 200, "run_tool", true},
		{"rpc error", `{"method":"tools/call","params":{"name":"plan"}}`, `{"error":{"code":-1}}`, 200, "plan", true},
		{"http error", `{"method":"tools/call","params":{"name":"describe_tool"}}`, `no`, 500, "describe_tool", true},
		{"direct call", `{"method":"tools/call","params":{"name":"echo__echo"}}`, `{"result":{}}`, 200, "direct", false},
		{"not a call", `{"method":"tools/list"}`, `{"result":{}}`, 200, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := New()
			var got string
			h := ObserveTools(reg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				got = string(b)
				// The gateway names the tool from its own decode.
				var m struct {
					Method string `json:"method"`
					Params struct {
						Name string `json:"name"`
					} `json:"params"`
				}
				if json.Unmarshal(b, &m) == nil && m.Method == "tools/call" {
					NoteTool(r.Context(), m.Params.Name)
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.answer))
			}))
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(tc.body)))
			if got != tc.body {
				t.Fatalf("handler read %q, want the whole body %q", got, tc.body)
			}
			var out bytes.Buffer
			_ = reg.WritePrometheus(&out)
			text := out.String()
			if tc.label == "" {
				if strings.Contains(text, "mcp_tool_") {
					t.Fatalf("observed a non-call:\n%s", text)
				}
				return
			}
			if !strings.Contains(text, `mcp_tool_requests_total{tool="`+tc.label+`"} 1`) {
				t.Errorf("no request counted for %q:\n%s", tc.label, text)
			}
			if has := strings.Contains(text, `mcp_tool_errors_total{tool="`+tc.label+`"} 1`); has != tc.failed {
				t.Errorf("error counted = %v, want %v:\n%s", has, tc.failed, text)
			}
		})
	}
}

func TestEmitterOff(t *testing.T) {
	if e := NewEmitter(New(), "OFF", time.Minute, nil); e != nil {
		t.Fatal("namespace off: want no emitter")
	}
	var nilE *Emitter
	nilE.Maybe(time.Now()) // must not panic
}

func TestEmitterInterval(t *testing.T) {
	reg := New()
	reg.Counter("x_total").Add(1)
	var out bytes.Buffer
	e := NewEmitter(reg, "", time.Minute, &out)
	now := time.Now()
	e.Maybe(now)
	n := out.Len()
	if n == 0 || !strings.Contains(out.String(), DefaultEMFNamespace) {
		t.Fatalf("first Maybe wrote %q", out.String())
	}
	e.Maybe(now.Add(30 * time.Second))
	if out.Len() != n {
		t.Fatal("Maybe wrote again within the interval")
	}
	e.Maybe(now.Add(61 * time.Second))
	if out.Len() == n {
		t.Fatal("Maybe wrote nothing after the interval")
	}
}
