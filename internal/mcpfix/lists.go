package mcpfix

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
)

// mcp-go's server writes the items of a list answer (tools/list,
// prompts/list, resources/list, resources/templates/list) from its own
// types, which keep only the members they know: a member a later MCP
// revision adds, a vendor's own, an unknown key inside a tool's
// annotations, execution or icons never reaches the client. A server that
// holds the items as its upstream sent them puts them back into mcp-go's
// answer with PatchList.

// listMembers are the members of a list answer's result holding its
// items, by method.
var listMembers = map[string]string{
	"tools/list":               "tools",
	"prompts/list":             "prompts",
	"resources/list":           "resources",
	"resources/templates/list": "resourceTemplates",
}

// ListMember returns the member of the result of method that holds the
// listed items ("tools" for tools/list), or "" when method is not a list.
func ListMember(method string) string { return listMembers[method] }

// PatchList returns w wrapped so that the answer written to it, a list
// answer with its items under member (JSON or an event stream), is held
// back; done writes it with each item passed through patch, which changes
// the item's members in place and reports whether it changed any. Call
// done after mcp-go's ServeHTTP returned. A message that is not such an
// answer is written as it is.
func PatchList(w http.ResponseWriter, member string, patch func(item map[string]json.RawMessage) bool) (_ http.ResponseWriter, done func()) {
	lw := &listWriter{ResponseWriter: w, member: member, patch: patch}
	return lw, lw.finish
}

type listWriter struct {
	http.ResponseWriter
	member string
	patch  func(map[string]json.RawMessage) bool
	status int
	buf    bytes.Buffer
}

func (w *listWriter) WriteHeader(code int)        { w.status = code }
func (w *listWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }
func (w *listWriter) Flush()                      {}

func (w *listWriter) finish() {
	out := w.buf.Bytes()
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		lines := bytes.Split(out, []byte("\n"))
		for i, l := range lines {
			if d, ok := bytes.CutPrefix(l, []byte("data: ")); ok {
				lines[i] = append([]byte("data: "), w.patchMessage(d)...)
			}
		}
		out = bytes.Join(lines, []byte("\n"))
	} else {
		out = w.patchMessage(out)
	}
	w.Header().Del("Content-Length")
	if w.status != 0 {
		w.ResponseWriter.WriteHeader(w.status)
	}
	_, _ = w.ResponseWriter.Write(out)
}

// patchMessage passes the items of msg, a JSON-RPC answer to a list
// request, through patch. Any other message comes back as it is.
func (w *listWriter) patchMessage(msg []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || m["result"] == nil {
		return msg
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(m["result"], &res) != nil || res[w.member] == nil {
		return msg
	}
	var items []map[string]json.RawMessage
	if json.Unmarshal(res[w.member], &items) != nil {
		return msg
	}
	changed := false
	for _, it := range items {
		if it != nil && w.patch(it) {
			changed = true
		}
	}
	if !changed {
		return msg
	}
	var err error
	if res[w.member], err = json.Marshal(items); err != nil {
		return msg
	}
	if m["result"], err = json.Marshal(res); err != nil {
		return msg
	}
	b, err := json.Marshal(m)
	if err != nil {
		return msg
	}
	if bytes.HasSuffix(msg, []byte("\n")) {
		b = append(b, '\n')
	}
	return b
}
