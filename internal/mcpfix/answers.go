package mcpfix

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
)

// mcp-go's server writes a result (tools/call, prompts/get,
// resources/read) from its own types, which keep only the members they
// know: a member a later MCP revision adds to a result, an unknown key of
// a content item, and a content type mcp-go does not know (its decoding
// fails) never reach the client. A server that passes on a result its
// upstream sent puts the upstream's members back with PatchResult.

// PatchResult returns w wrapped so that the JSON-RPC response to request
// id carrying a result, written as JSON or as an event, is written with
// the members of sent() set over the ones mcp-go wrote, but for
// resultType and the keys of _meta mcp-go writes for the client's
// protocol version (serverInfo). Everything else written
// passes through as it comes, flushes included; so does the response when
// sent() is nil.
func PatchResult(w http.ResponseWriter, id json.RawMessage, sent func() json.RawMessage) http.ResponseWriter {
	return &resultWriter{ResponseWriter: w, id: compactJSON(id), sent: sent}
}

type resultWriter struct {
	http.ResponseWriter
	id   []byte
	sent func() json.RawMessage
	done bool
}

func (w *resultWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *resultWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Write patches p when it is the response: mcp-go writes a JSON answer, or
// each event of a stream, with one Write.
func (w *resultWriter) Write(p []byte) (int, error) {
	if w.done || !bytes.Contains(p, []byte(`"result"`)) {
		return w.ResponseWriter.Write(p)
	}
	out := p
	if d, ok := bytes.CutPrefix(p, []byte("event: message\ndata: ")); ok {
		if msg, ok := bytes.CutSuffix(d, []byte("\n\n")); ok {
			if patched, ok := w.patch(msg); ok {
				out = append(append([]byte("event: message\ndata: "), patched...), "\n\n"...)
			}
		}
	} else if patched, ok := w.patch(bytes.TrimSuffix(p, []byte("\n"))); ok {
		out = append(patched, '\n')
	}
	if _, err := w.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// patch returns msg with the sent result's members, when msg is the
// response to the request.
func (w *resultWriter) patch(msg []byte) ([]byte, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || m["result"] == nil || !bytes.Equal(compactJSON(m["id"]), w.id) {
		return nil, false
	}
	w.done = true
	sent := w.sent()
	var res, up map[string]json.RawMessage
	if len(sent) == 0 || json.Unmarshal(m["result"], &res) != nil || json.Unmarshal(sent, &up) != nil || res == nil {
		return nil, false
	}
	for k, v := range up {
		switch k {
		case "resultType":
		case "_meta":
			res[k] = mergeObjects(v, res[k])
		default:
			res[k] = v
		}
	}
	var err error
	if m["result"], err = json.Marshal(res); err != nil {
		return nil, false
	}
	b, err := json.Marshal(m)
	return b, err == nil
}

// mergeObjects returns the members of the JSON objects base and over, over's
// winning (base when over is not an object).
func mergeObjects(base, over json.RawMessage) json.RawMessage {
	var a, b map[string]json.RawMessage
	if json.Unmarshal(over, &b) != nil || b == nil {
		return base
	}
	if json.Unmarshal(base, &a) != nil || a == nil {
		return over
	}
	maps.Copy(a, b)
	out, err := json.Marshal(a)
	if err != nil {
		return over
	}
	return out
}

func compactJSON(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}
