package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// invalidIdentity checks the identity a request names (a resource URI, a
// completion ref, a prompt or tool name) before mcp-go routes it, and
// returns why it cannot be made canonical ("" when it can). Such a request
// is answered with JSON-RPC invalid params, whatever the caller's grant:
// the answer depends on the syntax alone, so it reveals nothing about what
// exists. The handlers resolve the same identities again through
// resolveURI, so what they check and forward is the canonical form.
func invalidIdentity(head *requestHead, decoded bool) (id json.RawMessage, why string) {
	method := head.Method
	switch mcp.MCPMethod(method) {
	case mcp.MethodResourcesRead, mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe,
		mcp.MethodPromptsGet, mcp.MethodToolsCall, mcp.MethodCompletionComplete:
	default:
		return nil, "" // names no identity
	}
	if !decoded {
		return nil, "" // not one JSON-RPC object: mcp-go answers it
	}
	req := head
	p := req.Params
	var err error
	switch mcp.MCPMethod(method) {
	case mcp.MethodResourcesRead, mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe:
		if p.URI != nil {
			err = checkExposedURI(*p.URI)
		}
	case mcp.MethodPromptsGet:
		if p.Name != nil {
			err = policy.CheckName("prompt", *p.Name)
		}
	case mcp.MethodToolsCall:
		if p.Name != nil {
			err = policy.CheckName("tool", *p.Name)
		}
	case mcp.MethodCompletionComplete:
		switch {
		case p.Ref.Type == "ref/resource" && p.Ref.URI != nil && !strings.Contains(*p.Ref.URI, "{"):
			err = checkExposedURI(*p.Ref.URI)
		case p.Ref.Type == "ref/prompt" && p.Ref.Name != nil:
			err = policy.CheckName("prompt", *p.Ref.Name)
		}
	}
	if err != nil {
		return req.ID, err.Error()
	}
	return nil, ""
}

// requestHead is what the HTTP handler reads of a request before mcp-go
// does: its method and the identity it names, in one decode of the body.
type requestHead struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
	Params  struct {
		URI  *string `json:"uri"`
		Name *string `json:"name"`
		Ref  struct {
			Type string  `json:"type"`
			URI  *string `json:"uri"`
			Name *string `json:"name"`
		} `json:"ref"`
		// What the gateway's own tools/call path (fastcall.go) reads.
		Arguments      json.RawMessage `json:"arguments"`
		Meta           json.RawMessage `json:"_meta"`
		Task           json.RawMessage `json:"task"`
		InputResponses json.RawMessage `json:"inputResponses"`
		RequestState   json.RawMessage `json:"requestState"`
		// notifications/cancelled
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// readHead decodes body's head, reporting whether body decoded without
// error (the method is read even when another member has the wrong type).
func readHead(body []byte) (head requestHead, decoded bool) {
	err := json.Unmarshal(body, &head)
	return head, err == nil
}

// checkExposedURI makes a URI as the gateway exposes it canonical: the
// upstream URI inside gateway://server/..., or the URI itself.
func checkExposedURI(u string) error {
	if _, ok := resultID(u); ok {
		return nil // a stored result: its id is checked when it is read
	}
	if rest, ok := strings.CutPrefix(u, "gateway://"); ok {
		if _, orig, found := strings.Cut(rest, "/"); found {
			u = orig
		}
	}
	if _, err := policy.CanonicalURI(u); err != nil {
		return fmt.Errorf("resource URI: %w", err)
	}
	return nil
}

// writeInvalidParams answers one JSON-RPC request with invalid params.
func writeInvalidParams(w http.ResponseWriter, id json.RawMessage, msg string) {
	writeRPCErrorFor(w, id, mcp.INVALID_PARAMS, "invalid params: "+msg)
}
