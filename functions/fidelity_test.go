package functions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/awsrt"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// gatewayCaps is what the gateway declares to its upstreams (and what a
// host of MCP Apps declares to the gateway).
const gatewayCaps = `{"sampling":{},"elicitation":{},"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`

// rawTools lists the tools of the Streamable HTTP MCP server at url as
// they go over the wire (initialize, initialized, tools/list), by name.
func rawTools(t *testing.T, url string) map[string]map[string]any {
	t.Helper()
	sid := ""
	post := func(body string) []byte {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		defer resp.Body.Close()
		if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
			sid = s
		}
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + gatewayCaps + `,"clientInfo":{"name":"fidelity","version":"1"}}}`)
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	body := post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	return toolsOf(t, httpResponse{Headers: map[string]string{"Content-Type": sniffType(body)}, Body: string(body)}, 2)
}

func sniffType(b []byte) string {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		return "application/json"
	}
	return "text/event-stream"
}

// toolsOf decodes the tools of the tools/list answer id, by name.
func toolsOf(t *testing.T, r httpResponse, id int) map[string]map[string]any {
	t.Helper()
	var res struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(rpcResult(t, r, id), &res); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, tool := range res.Tools {
		out[tool["name"].(string)] = tool
	}
	return out
}

// startEverythingHTTP runs npm server-everything over Streamable HTTP
// and returns its MCP URL.
func startEverythingHTTP(t *testing.T) string {
	t.Helper()
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(testenv.NPMBin(t, "mcp-server-everything"), "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+port)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr + "/mcp"
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("server-everything did not listen within 60 s")
	return ""
}

// mcpEvent is an HTTP API event of the sample initialize with key, session
// and body.
func mcpEvent(t *testing.T, key, sid, body string) []byte {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(withBody(t, "http-api-initialize.json", sid, body), &ev); err != nil {
		t.Fatal(err)
	}
	ev["headers"].(map[string]any)["authorization"] = "Bearer " + key
	b, _ := json.Marshal(ev)
	return b
}

// TestFidelityAWSRoundTrip: on the AWS runtime (the sync and gateway
// functions under aws-lambda-rie, DynamoDB Local, the S3 fake), every
// field of every tool of npm server-everything (output schemas, _meta,
// annotations) and of the MCP Apps server equals, after the gateway's
// namespacing (server__tool, ui://server/...), what a client receives in
// tools/list, compared as JSON.
func TestFidelityAWSRoundTrip(t *testing.T) {
	rie, _ := emulated(t)
	ctx := context.Background()
	d := newDeployment(t)
	upstreams := map[string]string{"everything": startEverythingHTTP(t), "apps": testenv.StartMCPAppHTTP(t)}
	d.addServers(t, upstreams)
	const secret = "k-fidelity-admin"
	if err := dynamo.NewKeyStore(d.ddb, d.tables.Keys).Create(ctx, policy.Key{ID: "fidelity", SecretHash: policy.HashSecret(secret), Admin: true,
		Servers: map[string]policy.Rule{"everything": {}, "apps": {}}}); err != nil {
		t.Fatal(err)
	}

	syncFn := startFunction(t, rie, "toolrag-sync", testenv.GoBinary(t, "./functions/sync"), 900, d.env)
	var rep awsrt.SyncReport
	if err := json.Unmarshal(syncFn.invoke(t, sample(t, "schedule-sync.json")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Sync.Synced != 3 || rep.IndexErr != "" {
		t.Fatalf("sync report: %+v", rep)
	}

	gw := startFunction(t, rie, "toolrag-gateway", testenv.GoBinary(t, "./functions/gateway"), 29, d.env)
	r := decodeHTTP(t, gw.invoke(t, mcpEvent(t, secret, "",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+gatewayCaps+`,"clientInfo":{"name":"host","version":"1"}}}`)))
	sid := r.header("Mcp-Session-Id")
	if r.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", r.StatusCode, r.Body)
	}
	var init struct {
		Capabilities struct {
			Extensions map[string]any `json:"extensions"`
		} `json:"capabilities"`
	}
	_ = json.Unmarshal(rpcResult(t, r, 1), &init)
	if _, ok := init.Capabilities.Extensions[upstream.AppsExtension]; !ok {
		t.Errorf("the gateway function does not declare MCP Apps: %s", r.Body)
	}
	r = decodeHTTP(t, gw.invoke(t, mcpEvent(t, secret, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)))
	got := toolsOf(t, r, 2)

	withOutput, withMeta := 0, 0
	for srv, url := range upstreams {
		up := rawTools(t, url)
		if len(up) < 3 {
			t.Fatalf("%s listed %d tools", srv, len(up))
		}
		for name, u := range up {
			if u["outputSchema"] != nil {
				withOutput++
			}
			if u["_meta"] != nil {
				withMeta++
			}
			b, _ := json.Marshal(u)
			b = []byte(strings.ReplaceAll(string(b), `"ui://`, `"ui://`+srv+`/`))
			var want map[string]any
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			want["name"] = srv + "__" + name
			g, ok := got[srv+"__"+name]
			if !ok {
				t.Errorf("tools/list on Lambda lacks %s__%s", srv, name)
				continue
			}
			testenv.SameTool(t, "tools/list on Lambda", g, want)
		}
	}
	if withOutput == 0 || withMeta == 0 {
		t.Fatalf("the upstreams list %d tools with an outputSchema and %d with _meta: this test would prove nothing", withOutput, withMeta)
	}

	// The app's HTML, read through the function.
	r = decodeHTTP(t, gw.invoke(t, mcpEvent(t, secret, sid,
		`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"ui://apps/weather/forecast.html"}}`)))
	var read struct {
		Contents []struct {
			URI      string         `json:"uri"`
			MIMEType string         `json:"mimeType"`
			Text     string         `json:"text"`
			Meta     map[string]any `json:"_meta"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(rpcResult(t, r, 3), &read); err != nil || len(read.Contents) != 1 {
		t.Fatalf("resources/read of the app on Lambda: %v %s", err, r.Body)
	}
	c := read.Contents[0]
	if c.URI != "ui://apps/weather/forecast.html" || c.MIMEType != upstream.AppsMIMEType || !strings.Contains(c.Text, "<html") || c.Meta["ui"] == nil {
		t.Errorf("the app's resource on Lambda: %+v", c)
	}
}
