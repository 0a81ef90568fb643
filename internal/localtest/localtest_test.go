package localtest

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// Start serves a synced gateway: the agent key runs the echo server's
// reverse tool through the MCP endpoint, on the listener given or a new one.
func TestStart(t *testing.T) {
	registry := fmt.Sprintf("servers:\n  echo:\n    transport: stdio\n    command: %q\n", testenv.GoBinary(t, "./servers/echo"))
	keys := "keys:\n  - id: agent\n    secret: k-agent\n    servers: {echo: {}}\n"
	for _, bind := range []bool{false, true} {
		t.Run(fmt.Sprintf("listener=%v", bind), func(t *testing.T) {
			o := Options{Registry: registry, Keys: keys}
			if bind {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				o.Listener = ln
			}
			g := Start(t, o)
			if g.URL != g.Server.URL+"/mcp" {
				t.Errorf("URL = %q, want %q", g.URL, g.Server.URL+"/mcp")
			}
			if bind && g.Server.URL != "http://"+o.Listener.Addr().String() {
				t.Errorf("server at %s, not on the listener %s", g.Server.URL, o.Listener.Addr())
			}
			c, _ := testenv.Connect(t, g.URL, testenv.MCPClient{Key: "k-agent"})
			res, err := testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": "echo__reverse", "arguments": map[string]any{"text": "ab"}})
			if err != nil || res.IsError || testenv.Text(res) != "ba" {
				t.Errorf("run_tool echo__reverse = %q %v, want the synced tool's \"ba\"", testenv.Text(res), err)
			}
		})
	}
}
