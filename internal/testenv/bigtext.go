package testenv

import "github.com/toolrag/mcp-gateway/servers/echo/bigtext"

// BigText is the text of n bytes the echo server's big tool answers
// (servers/echo -big).
func BigText(n int) string { return bigtext.Text(n) }
