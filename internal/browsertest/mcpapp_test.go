package browsertest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// TestFidelityMCPAppRendered plays the host of an MCP App through the
// gateway: it finds the UI of a tool in the tools/list the gateway served,
// calls the tool, reads the app's HTML (a ui:// resource under the
// server's prefix) through the gateway, serves it with the Content
// Security Policy its _meta asks for, and shows it rendered in headless
// chromium. The app is the npm @modelcontextprotocol/ext-apps test server.
func TestFidelityMCPAppRendered(t *testing.T) {
	e := startGatewayKeys(t, testenv.MCPAppStdio(t, "weather"),
		"keys:\n  - id: host\n    secret: \"k-host\"\n    servers: {weather: {}}\n  - id: other\n    secret: \"k-other\"\n    servers: {echo: {}}\n", nil)
	caps := mcp.ClientCapabilities{Extensions: map[string]any{
		"io.modelcontextprotocol/ui": map[string]any{"mimeTypes": []string{"text/html;profile=mcp-app"}},
	}}
	host, _ := testenv.Connect(t, e.URL, testenv.MCPClient{Key: "k-host", Name: "host", Legacy: true, Capabilities: caps})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// The model finds the tool; its record names the app's UI.
	res, err := testenv.CallToolCtx(ctx, host, "describe_tool", map[string]any{"call_name": "weather__show_forecast"})
	if err != nil || res.IsError {
		t.Fatalf("describe_tool: %v %s", err, testenv.Text(res))
	}
	list, err := host.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var uri string
	for _, tool := range list.Tools {
		if tool.Name == "weather__show_forecast" && tool.Meta != nil {
			ui, _ := tool.Meta.AdditionalFields["ui"].(map[string]any)
			uri, _ = ui["resourceUri"].(string)
		}
	}
	if uri != "ui://weather/weather/forecast.html" {
		t.Fatalf("weather__show_forecast's _meta.ui.resourceUri through the gateway = %q, want ui://weather/weather/forecast.html", uri)
	}
	if res, err := testenv.CallToolCtx(ctx, host, "weather__show_forecast", map[string]any{"city": "Bergen"}); err != nil || res.IsError {
		t.Fatalf("weather__show_forecast: %v %+v", err, res)
	}

	rr := mcp.ReadResourceRequest{}
	rr.Params.URI = uri
	read, err := host.ReadResource(ctx, rr)
	if err != nil || len(read.Contents) != 1 {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	app, ok := read.Contents[0].(mcp.TextResourceContents)
	if !ok || app.MIMEType != "text/html;profile=mcp-app" || !strings.Contains(app.Text, "<html") {
		t.Fatalf("the app's resource through the gateway: %+v", read.Contents[0])
	}
	other, _ := testenv.Connect(t, e.URL, testenv.MCPClient{Key: "k-other", Name: "other", Capabilities: caps})
	if _, err := other.ReadResource(ctx, rr); err == nil {
		t.Error("a key not granted the app's server read its HTML")
	}

	// The host serves the HTML on its own origin with the CSP of its _meta.
	csp := appCSP(t, app.Meta)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, app.Text)
	}))
	t.Cleanup(origin.Close)

	bctx, logged := browser(t)
	wctx, wcancel := context.WithTimeout(bctx, 30*time.Second)
	defer wcancel()
	if err := chromedp.Do(wctx,
		chromedp.Navigate(origin.URL+"/#city=Bergen"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-rendered="yes"]`)),
	); err != nil {
		t.Fatalf("the app did not render: %v (console: %v)", err, logged())
	}
	if got := eval[string](t, bctx, `document.getElementById('forecast').textContent`); got != "Bergen: 21 °C, sunny" {
		t.Errorf("the app shows %q", got)
	}
	if got := eval[string](t, bctx, `document.getElementById('title').textContent`); got != "Weather forecast" {
		t.Errorf("the app's title is %q", got)
	}
	if l := logged(); len(l) > 0 {
		t.Errorf("the app logged errors: %v", l)
	}
	screenshot(t, bctx, "mcp-app")
}

// appCSP is the Content-Security-Policy a host sets for an app from its
// resource's _meta.ui.csp (the ext-apps spec's mapping).
func appCSP(t *testing.T, meta map[string]any) string {
	t.Helper()
	ui, _ := meta["ui"].(map[string]any)
	c, ok := ui["csp"].(map[string]any)
	if !ok {
		t.Fatalf("the app's resource carries no _meta.ui.csp: %v", meta)
	}
	list := func(k string) string {
		var out []string
		v, _ := c[k].([]any)
		for _, d := range v {
			out = append(out, fmt.Sprint(d))
		}
		return strings.Join(out, " ")
	}
	connect := list("connectDomains")
	if connect == "" {
		connect = "'none'"
	}
	res := list("resourceDomains")
	return fmt.Sprintf("default-src 'none'; script-src 'unsafe-inline' %[1]s; style-src 'unsafe-inline' %[1]s; img-src data: %[1]s; font-src %[1]s; media-src %[1]s; connect-src %[2]s; frame-src 'none'; base-uri 'self'", res, connect)
}
