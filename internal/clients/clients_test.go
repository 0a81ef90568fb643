// Package clients runs the snippets of docs/clients.md ("Connect your
// agent") with the real clients they name — the TypeScript SDK (API key
// and OAuth client credentials), mcp-remote (the stdio bridge of desktop
// apps), the MCP Inspector CLI and mcp-go — against a real local gateway,
// with a real authorization server (oauth2-mock-server) for OAuth.
package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/localtest"
	"github.com/toolrag/mcp-gateway/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	adminKey = "clients-admin-key-5e1f"
	agentKey = "clients-agent-key-c0d3"
)

var metaTools = "describe_tool find_tools run_tool run_tools"

type gw struct {
	url    string // MCP endpoint
	base   string
	logs   *testenv.Buffer
	issuer string
	as     *testenv.AuthServer
}

// startGateway runs a local gateway in front of servers/echo (stdio). With
// withOAuth it also starts the authorization server and accepts its tokens
// (scope mcp.tools → the echo server) beside the API keys.
func startGateway(t *testing.T, withOAuth bool) *gw {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	g := &gw{url: base + "/mcp", base: base, logs: &testenv.Buffer{}}
	reg := fmt.Sprintf("servers:\n  echo:\n    transport: stdio\n    command: %q\n", testenv.GoBinary(t, "./servers/echo"))
	keys := fmt.Sprintf(`keys:
  - id: admin
    secret: %q
    admin: true
    servers: {echo: {}}
  - id: agent
    secret: %q
    servers: {echo: {}}
`, adminKey, agentKey)
	if withOAuth {
		g.as = testenv.StartAuthServer(t)
		g.issuer = g.as.Issuer
		keys += fmt.Sprintf(`oauth:
  issuer: %q
  audience: %q
  scopes_supported: [mcp.tools]
  grants:
    - match: {scope: mcp.tools}
      servers: {echo: {}}
`, g.issuer, g.url)
	}
	log := slog.New(slog.NewTextHandler(g.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	localtest.Start(t, localtest.Options{Registry: reg, Keys: keys, Logger: log, Listener: ln})
	return g
}

// snippet returns a file of docs/clients and checks that docs/clients.md
// shows it verbatim (the documented snippet is the tested one).
func snippet(t *testing.T, name string) string {
	t.Helper()
	root := testenv.Root(t)
	b, err := os.ReadFile(filepath.Join(root, "docs", "clients", name))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, bytes.TrimSpace(b)) {
		t.Errorf("docs/clients.md does not show docs/clients/%s verbatim", name)
	}
	return string(b)
}

// runNode runs a JavaScript module with Node 22 from a folder whose
// node_modules is the installed test tools', and returns its stdout.
func runNode(t *testing.T, code string, env map[string]string) (string, string, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(testenv.ToolsDir(t), "npm", "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "main.mjs")
	if err := os.WriteFile(file, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Node22(t), file)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

func lineWith(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// TestTypeScriptSDKAPIKey: the API key snippet — a non-admin key sees the
// meta-tools and goes find → run.
func TestTypeScriptSDKAPIKey(t *testing.T) {
	g := startGateway(t, false)
	out, stderr, err := runNode(t, snippet(t, "sdk-api-key.mjs"), map[string]string{"MCP_URL": g.url, "TOOLRAG_KEY": agentKey})
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr)
	}
	if got := lineWith(out, "tools:"); got != metaTools {
		t.Errorf("tools %q, want the meta-tools %q", got, metaTools)
	}
	if got := lineWith(out, "found:"); got != "echo__reverse" {
		t.Errorf("find_tools' best match %q", got)
	}
	if got := lineWith(out, "result:"); got != "olleh" {
		t.Errorf("run_tool answered %q", got)
	}
}

// TestTypeScriptSDKOAuth: the client credentials snippet — the SDK starts
// without a token, reads the 401's resource_metadata, discovers the
// authorization server, gets a token for this resource and retries; the
// gateway names the principal in its audit lines, never the token.
func TestTypeScriptSDKOAuth(t *testing.T) {
	g := startGateway(t, true)
	out, stderr, err := runNode(t, snippet(t, "sdk-oauth.mjs"), map[string]string{
		"MCP_URL": g.url, "ISSUER": g.issuer, "CLIENT_ID": "agent-cc", "CLIENT_SECRET": "cc-secret"})
	if err != nil {
		t.Fatalf("%v\n%s\n%s\ngateway:\n%s", err, out, stderr, g.logs.String())
	}
	if got := lineWith(out, "tools:"); got != metaTools {
		t.Errorf("tools %q, want the meta-tools %q", got, metaTools)
	}
	if got := lineWith(out, "result:"); got != "olleh" {
		t.Errorf("run_tool answered %q", got)
	}
	logs := g.logs.String()
	if !strings.Contains(logs, "oauth:sub:agent-cc") && !strings.Contains(logs, "oauth:client:agent-cc") {
		t.Errorf("no log line names the principal oauth:sub:agent-cc or oauth:client:agent-cc:\n%s", logs)
	}
	if strings.Contains(logs, "eyJ") || strings.Contains(logs, "cc-secret") {
		t.Error("a token or the client secret reached the logs")
	}
}

// TestOAuthClientAgainstAPIKeyGateway: an OAuth-capable client (what the
// Inspector and mcp-remote do) with no valid credentials, against a gateway
// without OAuth, shows the gateway's own words: it takes API keys, and how
// to get one — not "Dynamic Client Registration rejected (HTTP 404)".
func TestOAuthClientAgainstAPIKeyGateway(t *testing.T) {
	g := startGateway(t, false)
	code := `
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
const authProvider = {
  get redirectUrl() { return 'http://127.0.0.1:1/callback'; },
  get clientMetadata() { return { client_name: 'probe', redirect_uris: ['http://127.0.0.1:1/callback'] }; },
  clientInformation() { return undefined; },
  saveClientInformation() {},
  tokens() { return undefined; },
  saveTokens() {},
  redirectToAuthorization() { throw new Error('would open a browser'); },
  saveCodeVerifier() {},
  codeVerifier() { return ''; },
};
const transport = new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), { authProvider });
try {
  await new Client({ name: 'probe', version: '1' }).connect(transport);
  console.log('connected?!');
} catch (e) {
  console.log('error:', e.message);
}
`
	out, stderr, err := runNode(t, code, map[string]string{"MCP_URL": g.url})
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr)
	}
	msg := lineWith(out, "error:")
	if !strings.Contains(msg, "takes API keys") || !strings.Contains(msg, "Authorization: Bearer <API key>") {
		t.Errorf("the OAuth client reports %q; want the gateway's API key message", msg)
	}
}

// mcpRemoteArgs turns the Claude Desktop config snippet into the command
// line the test runs: the installed mcp-remote instead of `npx -y`, the
// test gateway's URL, and the config's env with the key replaced.
func mcpRemoteArgs(t *testing.T, url, key string) (args []string, env []string) {
	t.Helper()
	var cfg struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(snippet(t, "claude_desktop_config.json")), &cfg); err != nil {
		t.Fatal(err)
	}
	s := cfg.MCPServers["toolrag"]
	if s.Command != "npx" || len(s.Args) < 3 || s.Args[0] != "-y" || s.Args[1] != "mcp-remote" {
		t.Fatalf("unexpected snippet: %+v", s)
	}
	args = []string{filepath.Join(testenv.NPMModule(t, "mcp-remote"), "dist", "proxy.js")}
	for _, a := range s.Args[2:] {
		a = strings.ReplaceAll(a, "http://127.0.0.1:8765/mcp", url)
		// Claude Desktop expands ${VAR} from the env block.
		a = os.Expand(a, func(k string) string { return strings.ReplaceAll(s.Env[k], "dev-key-full-access", key) })
		args = append(args, a)
	}
	return args, []string{"MCP_REMOTE_CONFIG_DIR=" + t.TempDir()}
}

// TestMCPRemote: the Claude Desktop config snippet — mcp-remote bridges
// stdio to the gateway with the API key header; an MCP client (mcp-go)
// on its stdio sees the meta-tools and runs a tool.
func TestMCPRemote(t *testing.T) {
	g := startGateway(t, false)
	args, env := mcpRemoteArgs(t, g.url, agentKey)
	c, err := client.NewStdioMCPClient(testenv.Node22(t), env, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "desktop-app", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize through mcp-remote: %v", err)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, " "); got != metaTools {
		t.Errorf("tools through mcp-remote: %q", got)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "run_tool"
	req.Params.Arguments = map[string]any{"call_name": "echo__reverse", "arguments": map[string]any{"text": "bridge"}}
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("run_tool through mcp-remote: %v %+v", err, res)
	}
	if txt, _ := mcp.AsTextContent(res.Content[0]); txt == nil || txt.Text != "egdirb" {
		t.Errorf("run_tool answered %+v", res.Content[0])
	}
}

// TestMCPRemoteWrongKey: with a wrong key mcp-remote falls back to OAuth;
// what it prints must carry the gateway's API key message.
func TestMCPRemoteWrongKey(t *testing.T) {
	g := startGateway(t, false)
	args, env := mcpRemoteArgs(t, g.url, "not-a-valid-key")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Node22(t), args...)
	cmd.Env = append(os.Environ(), env...)
	stdin, _ := cmd.StdinPipe()
	var out testenv.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// An initialize request makes it connect.
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	deadline := time.Now().Add(25 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(out.String(), "takes API keys") {
		time.Sleep(100 * time.Millisecond)
	}
	stdin.Close()
	cmd.Process.Kill()
	cmd.Wait()
	if !strings.Contains(out.String(), "takes API keys") {
		t.Errorf("mcp-remote with a wrong key does not show the gateway's API key message:\n%s", out.String())
	}
}

// TestInspectorCLI runs the Inspector CLI command of docs/clients.md.
func TestInspectorCLI(t *testing.T) {
	g := startGateway(t, false)
	const npx = "npx @modelcontextprotocol/inspector@2.12.0 "
	args := strings.Fields(strings.TrimPrefix(snippetLine(t, npx), npx))
	// Undo the shell quoting of the one quoted argument.
	joined := strings.Join(args, " ")
	joined = strings.ReplaceAll(joined, `"Authorization: Bearer $TOOLRAG_KEY"`, "\x00")
	var argv []string
	for _, a := range strings.Fields(joined) {
		a = strings.ReplaceAll(a, "http://127.0.0.1:8765/mcp", g.url)
		if a == "\x00" {
			a = "Authorization: Bearer " + agentKey
		}
		argv = append(argv, a)
	}
	// The package's bin (what npx runs): the launcher, which --cli hands to the CLI client.
	cli := filepath.Join(testenv.NPMModule(t, "@modelcontextprotocol/inspector"), "clients", "launcher", "build", "index.js")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	node := testenv.Node22(t)
	cmd := exec.CommandContext(ctx, node, append([]string{cli}, argv...)...)
	// The CLI starts its client with the `node` on PATH: Node 22.
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("inspector cli %v: %v\n%s\n%s", argv, err, out.String(), errb.String())
	}
	var res struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("inspector output: %v\n%s", err, out.String())
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, " "); got != metaTools {
		t.Errorf("inspector lists %q", got)
	}
}

// snippetLine returns the line of docs/clients.md that starts with prefix.
func snippetLine(t *testing.T, prefix string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(testenv.Root(t), "docs", "clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("docs/clients.md has no line starting with %q", prefix)
	return ""
}

// TestEditorConfigs: the Cursor and VS Code mcp.json snippets name the
// MCP URL and an Authorization header whose value, once the editor fills
// in the variable, is accepted by the gateway (sent here by mcp-go).
func TestEditorConfigs(t *testing.T) {
	g := startGateway(t, false)
	for _, c := range []struct{ file, root, variable string }{
		{"cursor-mcp.json", "mcpServers", "${env:TOOLRAG_KEY}"},
		{"vscode-mcp.json", "servers", "${input:toolrag-key}"},
	} {
		t.Run(c.file, func(t *testing.T) {
			var cfg map[string]map[string]struct {
				Type    string            `json:"type"`
				URL     string            `json:"url"`
				Headers map[string]string `json:"headers"`
			}
			raw := snippet(t, c.file)
			var top map[string]json.RawMessage
			if err := json.Unmarshal([]byte(raw), &top); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(`{"s":`+string(top[c.root])+`}`), &cfg); err != nil {
				t.Fatal(err)
			}
			s := cfg["s"]["toolrag"]
			if s.URL != "http://127.0.0.1:8765/mcp" || !strings.Contains(s.Headers["Authorization"], c.variable) {
				t.Fatalf("snippet: %+v", s)
			}
			hdr := strings.ReplaceAll(s.Headers["Authorization"], c.variable, agentKey)
			names := listWithMCPGo(t, g.url, map[string]string{"Authorization": hdr})
			if names != metaTools {
				t.Errorf("tools %q", names)
			}
		})
	}
}
