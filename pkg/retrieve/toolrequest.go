package retrieve

// Requests for a tool. Agents often word a capability query as a request
// for a tool ("find a tool to delete a file", "a tool that can take a
// screenshot", "web search tool"). In a tool catalog those words name no
// capability: "find" is not the action the agent needs and "tool"
// matches every description that says "this tool". stripToolRequest
// takes the request off so that the capability is ranked.

import "regexp"

var (
	// A leading request for a tool: an optional asking verb or phrase,
	// an optional article, the tool word, and the linking words (without
	// them the words are the query's own: "get tool details", "search
	// tools by name").
	toolRequestHead = regexp.MustCompile(`(?i)^\s*(?:please\s+)?` +
		`(?:(?:find|search\s+for|search|look\s+for|look\s+up|get|give\s+me|show\s+me|suggest|recommend|use|i\s+need|i\s+want|we\s+need|need|is\s+there|are\s+there|any|which|what)\s+)?` +
		`(?:an?\s+|the\s+|some\s+|one\s+)?(?:mcp\s+)?` +
		`(?:tools?|functions?|apis?|endpoints?|capabilit(?:y|ies)|methods?)\b` +
		`\s*(?::|-|` +
		`(?:that|which)\s+(?:can|could|will|would|should|does|do|is\s+able\s+to|are\s+able\s+to|lets?\s+(?:me|us)|allows?\s+(?:me\s+|us\s+)?to|helps?\s+(?:me\s+|us\s+)?(?:to\s+)?)|` +
		`to|for|capable\s+of|able\s+to|i\s+can\s+use\s+to|we\s+can\s+use\s+to)(?:\s*:)?\s+`)
	// A trailing tool word after a content word: "web search tool" (not
	// "find a tool").
	toolRequestTail = regexp.MustCompile(`(?i)\s+(?:tools?|functions?)\s*[?.!]*\s*$`)
	articleTail     = regexp.MustCompile(`(?i)(?:^|\s)(?:a|an|the|some|any|my|your|this|that)\s+(?:tools?|functions?)\s*[?.!]*\s*$`)
)

// stripToolRequest returns query without a leading request for a tool
// or a trailing "tool"; a query that is nothing but the request is
// returned unchanged.
func stripToolRequest(query string) string {
	q := toolRequestHead.ReplaceAllString(query, "")
	if !articleTail.MatchString(q) {
		q = toolRequestTail.ReplaceAllString(q, "")
	}
	if q == query || len(Terms(q)) == 0 {
		return query
	}
	return q
}
