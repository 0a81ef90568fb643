package retrieve

import "testing"

func TestStripToolRequest(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"find a tool to delete a file", "delete a file"},
		{"a tool that can take a screenshot", "take a screenshot"},
		{"I need a tool which can send email", "send email"},
		{"is there an API that lets me check the weather?", "check the weather?"},
		{"search for a function to resize images", "resize images"},
		{"tool for converting currency", "converting currency"},
		{"Tools: list repositories", "list repositories"},
		{"tool for: list repositories", "list repositories"},
		{"capability to translate text", "translate text"},
		{"web search tool", "web search"},
		// Left as they are: no request, or nothing but the request.
		{"delete a file", "delete a file"},
		{"find issues in the repo", "find issues in the repo"},
		{"list tools of the server", "list tools of the server"},
		{"get tool details", "get tool details"},
		{"search tools by name", "search tools by name"},
		{"what tools do I have", "what tools do I have"},
		{"find a tool", "find a tool"},
		{"tool", "tool"},
	} {
		if got := stripToolRequest(c.in); got != c.want {
			t.Errorf("stripToolRequest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
