package local

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// uiCaps declares MCP Apps support, as a host that renders apps does.
var uiCaps = mcp.ClientCapabilities{Extensions: map[string]any{
	"io.modelcontextprotocol/ui": map[string]any{"mimeTypes": []string{"text/html;profile=mcp-app"}},
}}

// connectApps opens a session with key, declaring MCP Apps support or not,
// and records the raw answers.
func connectApps(t *testing.T, url, key string, ui bool) (*client.Client, *mcp.InitializeResult, *rawRecorder) {
	t.Helper()
	rec := &rawRecorder{}
	o := testenv.MCPClient{Key: key, Legacy: true, Name: "apps-host",
		Transport: []transport.StreamableHTTPCOption{transport.WithHTTPBasicClient(&http.Client{Transport: rec})}}
	if ui {
		o.Capabilities = uiCaps
	}
	c, init := testenv.Connect(t, url, o)
	return c, init, rec
}

func listTools(t *testing.T, c *client.Client, rec *rawRecorder) map[string]map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.ListTools(ctx, mcp.ListToolsRequest{}); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	return rec.tools(t)
}

// underPrefix is an upstream's tool of the MCP Apps server as the gateway
// serves it for server srv: its name prefixed, its ui:// URIs mapped to
// ui://srv/..., every other field as the upstream sent it.
func underPrefix(t *testing.T, srv string, tool map[string]any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(tool)
	b = []byte(strings.ReplaceAll(string(b), `"ui://weather/`, `"ui://`+srv+`/weather/`))
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	out["name"] = srv + "__" + tool["name"].(string)
	return out
}

// TestFidelityMCPApps: an MCP App (npm @modelcontextprotocol/ext-apps)
// works through the gateway. The extension is negotiated both ways; tools
// come with every field, their ui:// URIs under the server's prefix; the
// app's HTML is served with its MIME type and CSP _meta to a key granted
// the server only; the app-only tool is hidden from the model (find_tools,
// the meta-tools, tools/list of clients without the extension) but listed
// to hosts and callable by the app.
func TestFidelityMCPApps(t *testing.T) {
	httpURL := testenv.StartMCPAppHTTP(t)
	reg := testenv.MCPAppStdio(t, "apps") + "  appshttp:\n    transport: streamable_http\n    url: \"" + httpURL + "\"\n"
	e := startGateway(t, reg, nil)
	upstream := listRaw(t, httpURL, "")
	if upstream["refresh_forecast"] == nil || upstream["show_forecast"] == nil {
		t.Fatalf("the MCP Apps server lists %v", upstream)
	}

	host, init, hostRec := connectApps(t, e.url, "k-apps-admin", true)
	if _, ok := init.Capabilities.Extensions["io.modelcontextprotocol/ui"]; !ok {
		t.Errorf("the gateway does not declare the MCP Apps extension: %+v", init.Capabilities.Extensions)
	}

	t.Run("UpstreamNegotiation", func(t *testing.T) {
		// The gateway declared the extension to its upstream: the server
		// saw the MIME type of MCP Apps in the gateway's capabilities.
		res, err := testenv.CallTool(host, 30*time.Second, "apps__ui_support", map[string]any{})
		if err != nil || res.IsError || !strings.Contains(testenv.Text(res), "text/html;profile=mcp-app") {
			t.Errorf("the upstream saw no MCP Apps capability from the gateway: %v %s", err, testenv.Text(res))
		}
	})

	t.Run("ToolsList", func(t *testing.T) {
		got := listTools(t, host, hostRec)
		for _, srv := range []string{"apps", "appshttp"} {
			for name, u := range upstream {
				want := underPrefix(t, srv, u)
				g, ok := got[srv+"__"+name]
				if !ok {
					t.Errorf("a host's tools/list lacks %s__%s", srv, name)
					continue
				}
				testenv.SameTool(t, "tools/list through the gateway", g, want)
			}
		}
		// A client without the extension (the model's list) does not get
		// the app-only tool, and gets the others.
		plain, _, plainRec := connectApps(t, e.url, "k-apps-admin", false)
		model := listTools(t, plain, plainRec)
		if _, ok := model["apps__refresh_forecast"]; ok {
			t.Error("tools/list of a client without MCP Apps shows the app-only tool")
		}
		if _, ok := model["apps__show_forecast"]; !ok {
			t.Error("tools/list of a client without MCP Apps lacks apps__show_forecast")
		}
		// A host with a non-admin key: the app-only tools of its servers
		// are listed (the app calls them), the model's tools only once found.
		agent, _, agentRec := connectApps(t, e.url, "k-apps", true)
		listed := listTools(t, agent, agentRec)
		if _, ok := listed["apps__refresh_forecast"]; !ok {
			t.Errorf("a host's tools/list (non-admin key) lacks the app-only tool: %v", keys(listed))
		}
		if _, ok := listed["apps__show_forecast"]; ok {
			t.Error("a non-admin key's tools/list shows a tool it has not found")
		}
	})

	t.Run("HiddenFromModel", func(t *testing.T) {
		c, _, _ := connectApps(t, e.url, "k-apps", true)
		res, err := testenv.CallTool(c, 30*time.Second, "find_tools", map[string]any{"query": "refresh the weather forecast shown in the view", "top_k": 10})
		if err != nil || res.IsError {
			t.Fatalf("find_tools: %v %s", err, testenv.Text(res))
		}
		text := testenv.Text(res)
		if strings.Contains(text, "refresh_forecast") {
			t.Errorf("find_tools returned the app-only tool: %s", text)
		}
		if !strings.Contains(text, "show_forecast") {
			t.Errorf("find_tools did not find show_forecast: %s", text)
		}
		for _, meta := range []struct {
			name string
			args map[string]any
		}{
			{"run_tool", map[string]any{"call_name": "apps__refresh_forecast", "arguments": map[string]any{"city": "Oslo"}}},
			{"describe_tool", map[string]any{"call_name": "apps__refresh_forecast"}},
			{"run_tools", map[string]any{"calls": []any{map[string]any{"call_name": "apps__refresh_forecast", "arguments": map[string]any{"city": "Oslo"}}}}},
		} {
			res, err := testenv.CallTool(c, 30*time.Second, meta.name, meta.args)
			if err != nil {
				t.Fatalf("%s: %v", meta.name, err)
			}
			b, _ := json.Marshal(res)
			if !strings.Contains(string(b), "called only by its MCP App") || strings.Contains(string(b), "refreshed") {
				t.Errorf("%s of the app-only tool: %s", meta.name, b)
			}
		}
		// The app calls it directly (tools/call), through the host.
		res, err = testenv.CallTool(c, 30*time.Second, "apps__refresh_forecast", map[string]any{"city": "Oslo"})
		if err != nil || res.IsError || testenv.Text(res) != "refreshed Oslo" {
			t.Errorf("the app's tools/call of its app-only tool: %v %+v", err, res)
		}
	})

	t.Run("ResultMeta", func(t *testing.T) {
		res, err := testenv.CallTool(host, 30*time.Second, "apps__show_forecast", map[string]any{"city": "Bergen"})
		if err != nil || res.IsError {
			t.Fatalf("show_forecast: %v %+v", err, res)
		}
		ui, _ := res.Meta.AdditionalFields["ui"].(map[string]any)
		if ui["resourceUri"] != "ui://apps/weather/forecast.html" {
			t.Errorf("the result's _meta.ui.resourceUri = %v, want ui://apps/weather/forecast.html", ui["resourceUri"])
		}
	})

	t.Run("UIResource", func(t *testing.T) {
		ctx := context.Background()
		upClient, _ := testenv.Connect(t, httpURL, testenv.MCPClient{Legacy: true, Capabilities: uiCaps})
		rr := mcp.ReadResourceRequest{}
		rr.Params.URI = "ui://weather/forecast.html"
		direct, err := upClient.ReadResource(ctx, rr)
		if err != nil || len(direct.Contents) != 1 {
			t.Fatalf("resources/read at the upstream: %v", err)
		}
		want := direct.Contents[0].(mcp.TextResourceContents)

		listed, err := host.ListResources(ctx, mcp.ListResourcesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range listed.Resources {
			if r.URI == "ui://apps/weather/forecast.html" {
				found = true
				if r.MIMEType != "text/html;profile=mcp-app" {
					t.Errorf("the listed UI resource's MIME type is %q", r.MIMEType)
				}
			}
		}
		if !found {
			t.Errorf("resources/list lacks ui://apps/weather/forecast.html: %+v", listed.Resources)
		}

		for _, uri := range []string{"ui://apps/weather/forecast.html", "ui://appshttp/weather/forecast.html"} {
			rr.Params.URI = uri
			got, err := host.ReadResource(ctx, rr)
			if err != nil || len(got.Contents) != 1 {
				t.Fatalf("resources/read %s through the gateway: %v", uri, err)
			}
			tc, ok := got.Contents[0].(mcp.TextResourceContents)
			if !ok {
				t.Fatalf("resources/read %s: %T", uri, got.Contents[0])
			}
			w := want
			w.URI = uri
			if !reflect.DeepEqual(tc, w) {
				t.Errorf("resources/read %s through the gateway:\n got %+v\nwant %+v", uri, tc, w)
			}
		}
		other, _ := connect(t, e.url, "k-agent", true)
		rr.Params.URI = "ui://apps/weather/forecast.html"
		if _, err := other.ReadResource(ctx, rr); err == nil {
			t.Error("a key not granted the server read its app's HTML")
		}
	})
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
