package functions_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/awsrt"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/gateway"
	"github.com/toolrag/mcp-gateway/pkg/health"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// TestLongCallsLambda runs issue 27's Lambda-path cases on the real gateway
// function under aws-lambda-rie (DynamoDB Local, gofakes3):
//   - a 50 MB result is stored in S3 and answered as a resource_link whose
//     presigned URL gives back every byte; another key's resources/read is
//     "not found", and the owner's says to use the URL (one Lambda
//     response cannot carry it);
//   - a server the health function marked down answers at once (the
//     gateway's own time under 100 ms), naming the server and since when;
//   - an upstream's -32042 URL-elicitation error reaches a client that
//     declared URL elicitation intact, code and data.
func TestLongCallsLambda(t *testing.T) {
	rie, bins := emulated(t, "gateway", "sync")
	d := newDeployment(t)
	ctx := context.Background()
	reg := dynamo.NewRegistryStore(d.ddb, d.tables.Registry)
	bigURL, _ := testenv.StartEchoAt(t, "127.0.0.1:0", "-big")
	downURL, stopDown := testenv.StartEchoAt(t, "127.0.0.1:0")
	d.addServers(t, map[string]string{"big": bigURL, "down": downURL, "errs": testenv.StartErrorUpstream(t)}, "owner", "other")
	d.sync(t, rie, bins["sync"], 4)
	// "down" goes down after the sync (its tools are in the catalog): a
	// listener that accepts and never answers takes its address, and the
	// health function's record says so.
	stopDown()
	ln, err := net.Listen("tcp", strings.TrimSuffix(strings.TrimPrefix(downURL, "http://"), "/mcp"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	since := time.Now().Add(-time.Minute).UTC().Truncate(time.Second)
	if err := reg.RecordHealth(ctx, "down", health.Status{Up: false, CheckedAt: time.Now(), DownSince: since, Error: "connection timed out"}); err != nil {
		t.Fatal(err)
	}

	// The 50 MB result's time is measured, not asserted (the test machine
	// is shared): this function gets the Function URL's time budget.
	env := map[string]string{}
	for k, v := range d.env {
		env[k] = v
	}
	env["MCP_GATEWAY_UPSTREAM_TIMEOUT"] = "110"
	if st, err := reg.HealthStatus(ctx); err != nil || st["down"].Up || st["down"].DownSince.IsZero() {
		t.Fatalf("the registry's health of \"down\": %+v %v", st["down"], err)
	}
	gw := startFunction(t, rie, "toolrag-gateway", bins["gateway"], 120, env)
	owner := newLambdaSession(t, gw, "k-owner", `{"elicitation":{"url":{}}}`)
	other := newLambdaSession(t, gw, "k-other", `{}`)

	t.Run("50 MB result", func(t *testing.T) {
		const size = 50_000_000
		puts := d.s3.Puts.Load()
		start := time.Now()
		res := owner.call(t, "run_tool", map[string]any{"call_name": "big__big", "arguments": map[string]any{"bytes": size}})
		var r struct {
			Content []struct {
				Type string          `json:"type"`
				Text string          `json:"text"`
				URI  string          `json:"uri"`
				Size int             `json:"size"`
				Meta json.RawMessage `json:"_meta"`
			} `json:"content"`
			IsError bool `json:"isError"`
		}
		if err := json.Unmarshal(res, &r); err != nil || r.IsError || len(r.Content) != 2 || r.Content[1].Type != "resource_link" {
			t.Fatalf("result: %v %.1000s", err, res)
		}
		link := r.Content[1]
		if !strings.HasPrefix(link.URI, gateway.ResultURIPrefix) || link.Size != size || !strings.HasPrefix(r.Content[0].Text, "00000000\n") {
			t.Fatalf("link %+v, preview %.60q", link, r.Content[0].Text)
		}
		t.Logf("50 MB result stored and linked in %v", time.Since(start))
		if n := d.s3.Puts.Load() - puts; n != 1 {
			t.Errorf("%d S3 PUTs for one stored result, want 1", n)
		}
		var meta map[string]struct {
			URL string `json:"url"`
		}
		_ = json.Unmarshal(link.Meta, &meta)
		u := meta[gateway.DownloadMeta].URL
		if !strings.HasPrefix(u, d.s3.URL+"/") || !strings.Contains(u, "X-Amz-Signature=") {
			t.Fatalf("download URL %q is not a presigned URL of the bucket", u)
		}
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(body) != size || sha256.Sum256(body) != sha256.Sum256([]byte(testenv.BigText(size))) {
			t.Fatalf("presigned GET: %d, %d bytes", resp.StatusCode, len(body))
		}
		if msg := other.rpcError(t, "resources/read", map[string]any{"uri": link.URI}); !strings.Contains(msg, "not found") {
			t.Errorf("another key's resources/read: %q, want not found", msg)
		}
		if msg := owner.rpcError(t, "resources/read", map[string]any{"uri": link.URI}); !strings.Contains(msg, "signed URL") {
			t.Errorf("the owner's resources/read of 50 MB on Lambda: %q, want the way to the signed URL", msg)
		}
	})

	t.Run("down server fails fast", func(t *testing.T) {
		start := time.Now()
		res := owner.call(t, "run_tool", map[string]any{"call_name": "down__echo", "arguments": map[string]any{"text": "x"}})
		took := time.Since(start)
		text, isErr := testenv.ResultText(t, res)
		if !isErr || !strings.Contains(text, `"down"`) || !strings.Contains(text, "down since "+since.Format(time.RFC3339)) {
			t.Fatalf("call to the down server: error=%v %q", isErr, text)
		}
		m := gw.logLine(t, regexp.MustCompile(`tool=down__echo outcome=[a-z_]+ duration_ms=([0-9.]+)`))
		if ms, _ := strconv.ParseFloat(m[1], 64); ms >= 100 || took > 5*time.Second {
			t.Errorf("the gateway answered in %s ms (invoke %v); want under 100 ms", m[1], took)
		}
		t.Logf("down server refused in %s ms (invoke round trip %v)", m[1], took)
	})

	t.Run("upstream -32042 intact", func(t *testing.T) {
		for _, name := range []string{"errs__needs_link", "run_tool"} {
			args := map[string]any{}
			if name == "run_tool" {
				args = map[string]any{"call_name": "errs__needs_link", "arguments": map[string]any{}}
			}
			e := owner.rpcErrorObj(t, "tools/call", map[string]any{"name": name, "arguments": args})
			b, _ := json.Marshal(e.Data)
			if e.Code != -32042 || !strings.Contains(string(b), `"url":"https://upstream.example/connect?x=1"`) || !strings.Contains(string(b), `"elicitationId":"el-1"`) {
				t.Errorf("%s: error %d %s %s", name, e.Code, e.Message, b)
			}
		}
	})
}

// addServers registers Streamable HTTP servers (id → MCP URL) and creates
// keys (secret "k-<key>") granted all of them.
func (d *deployment) addServers(t *testing.T, servers map[string]string, keys ...string) {
	t.Helper()
	ctx := context.Background()
	reg := dynamo.NewRegistryStore(d.ddb, d.tables.Registry)
	grants := map[string]policy.Rule{}
	for id, u := range servers {
		doc, err := config.EncodeServerConfig(upstream.ServerConfig{Transport: upstream.TransportStreamableHTTP, URL: u})
		if err != nil {
			t.Fatal(err)
		}
		if err := reg.PutServer(ctx, id, doc); err != nil {
			t.Fatal(err)
		}
		grants[id] = policy.Rule{}
	}
	ks := dynamo.NewKeyStore(d.ddb, d.tables.Keys)
	for _, k := range keys {
		if err := ks.Create(ctx, policy.Key{ID: k, SecretHash: policy.HashSecret("k-" + k), Servers: grants}); err != nil {
			t.Fatal(err)
		}
	}
}

// sync runs the sync function once under the emulator and checks that it
// synced want servers.
func (d *deployment) sync(t *testing.T, rie, bin string, want int) {
	t.Helper()
	fn := startFunction(t, rie, "toolrag-sync", bin, 900, d.env)
	var rep awsrt.SyncReport
	if err := json.Unmarshal(fn.invoke(t, sample(t, "schedule-sync.json")), &rep); err != nil || rep.Sync.Synced != want {
		t.Fatalf("sync: %v %+v", err, rep)
	}
}

// lambdaSession is a 2025-11-25 session through the gateway function, one
// HTTP API event per request.
type lambdaSession struct {
	gw       *function
	key, sid string
	id       int
}

func newLambdaSession(t *testing.T, gw *function, key, caps string) *lambdaSession {
	t.Helper()
	s := &lambdaSession{gw: gw, key: key}
	r := s.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":%s,"clientInfo":{"name":"rie","version":"1"}}}`, caps))
	if s.sid = r.header("Mcp-Session-Id"); s.sid == "" {
		t.Fatalf("initialize as %s: %d %.300s", key, r.StatusCode, r.Body)
	}
	s.post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *lambdaSession) post(t *testing.T, body string) httpResponse {
	t.Helper()
	hdr := map[string]string{}
	if s.sid != "" {
		hdr["mcp-session-id"] = s.sid
		hdr["mcp-protocol-version"] = "2025-11-25"
	}
	return postEvent(t, s.gw, s.key, hdr, body)
}

// withGateway is the session s as another instance of the gateway
// function receives its requests.
func (s *lambdaSession) withGateway(gw *function) *lambdaSession {
	c := *s
	c.gw = gw
	return &c
}

// postEvent sends body to the gateway function as an HTTP API request with
// key's bearer token and the headers hdr.
func postEvent(t *testing.T, gw *function, key string, hdr map[string]string, body string) httpResponse {
	t.Helper()
	return decodeHTTP(t, gw.invoke(t, httpEvent(t, key, hdr, body)))
}

// httpEvent is an HTTP API event of a POST of body with key's bearer token
// and the headers hdr.
func httpEvent(t *testing.T, key string, hdr map[string]string, body string) []byte {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(sample(t, "http-api-initialize.json"), &ev); err != nil {
		t.Fatal(err)
	}
	h := ev["headers"].(map[string]any)
	delete(h, "content-length")
	h["authorization"] = "Bearer " + key
	for k, v := range hdr {
		h[strings.ToLower(k)] = v
	}
	ev["body"] = body
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(ev)
	return b.Bytes()
}

func (s *lambdaSession) request(t *testing.T, method string, params any) (int, httpResponse) {
	t.Helper()
	s.id++
	p, _ := json.Marshal(params)
	return s.id, s.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, s.id, method, p))
}

func (s *lambdaSession) call(t *testing.T, name string, args map[string]any) json.RawMessage {
	t.Helper()
	id, r := s.request(t, "tools/call", map[string]any{"name": name, "arguments": args})
	return rpcResult(t, r, id)
}

type rpcErr struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data"`
}

// rpcErrorObj sends a request that must fail with a JSON-RPC error.
func (s *lambdaSession) rpcErrorObj(t *testing.T, method string, params any) rpcErr {
	t.Helper()
	id, r := s.request(t, method, params)
	var msg struct {
		ID    int     `json:"id"`
		Error *rpcErr `json:"error"`
	}
	for _, line := range strings.Split(r.Body, "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "data: ")
		if json.Unmarshal([]byte(line), &msg) == nil && msg.ID == id {
			break
		}
	}
	if msg.ID != id || msg.Error == nil {
		t.Fatalf("%s: want a JSON-RPC error, got %d %.500s", method, r.StatusCode, r.Body)
	}
	return *msg.Error
}

func (s *lambdaSession) rpcError(t *testing.T, method string, params any) string {
	t.Helper()
	return s.rpcErrorObj(t, method, params).Message
}
