package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Jaeger is a Jaeger all-in-one (in-memory storage) listening on
// 127.0.0.1: the OTLP receiver and trace store of the tracing tests.
type Jaeger struct {
	// OTLP is the OTLP/HTTP endpoint (http://127.0.0.1:<port>), the value
	// of OTEL_EXPORTER_OTLP_ENDPOINT.
	OTLP string
	// Query is the query service and UI (http://127.0.0.1:<port>):
	// GET /api/traces/<trace id> reads a trace back.
	Query string
}

var jaeger shared[*Jaeger]

// JaegerBinary returns .tools/bin/jaeger-all-in-one (built by
// scripts/deps.sh), or fails or skips the test when it is missing.
func JaegerBinary(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(ToolsDir(t), "bin", "jaeger-all-in-one")
	if _, err := os.Stat(bin); err != nil {
		Missing(t, "Jaeger ("+bin+")")
	}
	return bin
}

// StartJaeger returns a Jaeger shared by the whole test binary, starting it
// on first use; it is stopped when testenv.Main returns. Each test tells
// its traces apart by their trace ids or service names.
func StartJaeger(t testing.TB) *Jaeger {
	t.Helper()
	bin := JaegerBinary(t)
	return jaeger.get(t, "Jaeger", func() (*Jaeger, func(), error) { return startJaeger(bin) })
}

func startJaeger(bin string) (*Jaeger, func(), error) {
	ports := make([]int, 7)
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return nil, nil, err
		}
		ports[i] = p
	}
	addr := func(i int) string { return fmt.Sprintf("127.0.0.1:%d", ports[i]) }
	cmd := exec.Command(bin,
		"--collector.otlp.enabled=true",
		"--collector.otlp.http.host-port="+addr(0),
		"--collector.otlp.grpc.host-port="+addr(1),
		"--query.http-server.host-port="+addr(2),
		"--query.grpc-server.host-port="+addr(3),
		"--admin.http.host-port="+addr(4),
		"--collector.http-server.host-port="+addr(5),
		"--collector.grpc-server.host-port="+addr(6),
	)
	cmd.Env = append(os.Environ(), "SPAN_STORAGE_TYPE=memory")
	j := &Jaeger{OTLP: "http://" + addr(0), Query: "http://" + addr(2)}
	// Ready when the query API answers and the OTLP receiver accepts an
	// (empty) export.
	stop, err := startDaemon(cmd, "jaeger", 60*time.Second, func(c *http.Client) bool {
		return get(c, j.Query+"/api/services") && postEmpty(c, j.OTLP+"/v1/traces")
	})
	if err != nil {
		return nil, nil, err
	}
	return j, stop, nil
}

func get(c *http.Client, url string) bool {
	resp, err := c.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func postEmpty(c *http.Client, url string) bool {
	resp, err := c.Post(url, "application/json", strings.NewReader("{}"))
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// JaegerSpan is one span as Jaeger's query API returns it, simplified.
type JaegerSpan struct {
	TraceID  string
	SpanID   string
	ParentID string // "" for a root span
	Name     string
	Service  string
	Start    time.Time
	Duration time.Duration
	Tags     map[string]any
}

// Tag returns tag k as a string ("" when absent).
func (s JaegerSpan) Tag(k string) string {
	v, ok := s.Tags[k]
	if !ok {
		return ""
	}
	if str, ok := v.(string); ok {
		return str
	}
	return fmt.Sprint(v)
}

// Trace reads trace id back from Jaeger, waiting (up to timeout) until
// done says it is complete (spans arrive in batches); it returns the last
// read when done never agrees.
func (j *Jaeger) Trace(t testing.TB, id string, timeout time.Duration, done func([]JaegerSpan) bool) []JaegerSpan {
	t.Helper()
	return j.poll(t, "trace "+id, "/api/traces/"+id, timeout, done)
}

// Service reads back the traces of service (the last hour, at most 100),
// waiting (up to timeout) until done says they are complete; it returns
// the last read, every span of every trace.
func (j *Jaeger) Service(t testing.TB, service string, timeout time.Duration, done func([]JaegerSpan) bool) []JaegerSpan {
	t.Helper()
	return j.poll(t, "service "+service, "/api/traces?limit=100&lookback=1h&service="+url.QueryEscape(service), timeout, done)
}

// poll reads path every 250 ms until done agrees with the spans read or
// timeout has passed, and returns the last read; what names it in the log
// of a failed read.
func (j *Jaeger) poll(t testing.TB, what, path string, timeout time.Duration, done func([]JaegerSpan) bool) []JaegerSpan {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		spans, err := j.read(path)
		if err == nil && done(spans) {
			return spans
		}
		if time.Now().After(deadline) {
			if err != nil {
				t.Logf("jaeger: %s: %v", what, err)
			}
			return spans
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (j *Jaeger) read(path string) ([]JaegerSpan, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.Query+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	var body struct {
		Data []struct {
			Spans []struct {
				TraceID       string `json:"traceID"`
				SpanID        string `json:"spanID"`
				OperationName string `json:"operationName"`
				References    []struct {
					RefType string `json:"refType"`
					TraceID string `json:"traceID"`
					SpanID  string `json:"spanID"`
				} `json:"references"`
				StartTime int64 `json:"startTime"` // µs
				Duration  int64 `json:"duration"`  // µs
				Tags      []struct {
					Key   string `json:"key"`
					Value any    `json:"value"`
				} `json:"tags"`
				ProcessID string `json:"processID"`
			} `json:"spans"`
			Processes map[string]struct {
				ServiceName string `json:"serviceName"`
			} `json:"processes"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	var out []JaegerSpan
	for _, d := range body.Data {
		for _, s := range d.Spans {
			js := JaegerSpan{TraceID: s.TraceID, SpanID: s.SpanID, Name: s.OperationName,
				Service: d.Processes[s.ProcessID].ServiceName, Tags: map[string]any{},
				Start: time.UnixMicro(s.StartTime), Duration: time.Duration(s.Duration) * time.Microsecond}
			for _, r := range s.References {
				if r.RefType == "CHILD_OF" {
					js.ParentID = r.SpanID
				}
			}
			for _, tg := range s.Tags {
				js.Tags[tg.Key] = tg.Value
			}
			out = append(out, js)
		}
	}
	return out, nil
}

// SpanNamed returns the first span of spans named name.
func SpanNamed(spans []JaegerSpan, name string) (JaegerSpan, bool) {
	for _, s := range spans {
		if s.Name == name {
			return s, true
		}
	}
	return JaegerSpan{}, false
}

// Ancestors returns the names of s's ancestors in spans, nearest first.
func Ancestors(spans []JaegerSpan, s JaegerSpan) []string {
	byID := make(map[string]JaegerSpan, len(spans))
	for _, x := range spans {
		byID[x.SpanID] = x
	}
	var out []string
	for p := s.ParentID; p != ""; {
		x, ok := byID[p]
		if !ok {
			out = append(out, "(remote "+p+")")
			break
		}
		out = append(out, x.Name)
		p = x.ParentID
	}
	return out
}

// InChain reports whether chain are among s's ancestors in spans, in
// order, nearest first (others may come between); a name in chain also
// matches an ancestor named name plus a space and a target.
func InChain(spans []JaegerSpan, s JaegerSpan, chain ...string) bool {
	i := 0
	for _, name := range Ancestors(spans, s) {
		if i < len(chain) && (name == chain[i] || strings.HasPrefix(name, chain[i]+" ")) {
			i++
		}
	}
	return i == len(chain)
}
