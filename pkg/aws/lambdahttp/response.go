// The gateway is kept inside AWS Lambda's hard limits, where crossing one
// does not fail a request but the invocation: a
// response payload over 6 MB (Function.ResponseSizeTooLarge, and the warm
// instance exits) and a handler that outlives the function timeout (the
// instance is killed and API Gateway answers 503). Each limit is turned
// into an answer the client can act on: a tool error or a JSON-RPC error
// saying what happened.

package lambdahttp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/toolrag/mcp-gateway/pkg/httpserve"
)

// PayloadLimit is Lambda's limit on a synchronous invocation's response
// payload: 6 MB, counted as the bytes of the JSON document the function
// returns (the HTTP body escaped into a JSON string, plus the status and
// headers).
const PayloadLimit = 6 * 1024 * 1024

// envelope is a generous allowance for the JSON around the body and the
// headers: the status, the field names, a REST API response's headers
// twice (single and multi-value), cookies.
const envelope = 1024

// Response returns h with its answers checked against limit (PayloadLimit
// when limit <= 0), for a Lambda front end that buffers the response (API
// Gateway, a BUFFERED Function URL). The answer is held until h returns;
// when its encoded size is over the limit it is replaced: the answer to an
// MCP tools/call becomes a tool error (isError: true), to another JSON-RPC
// request a JSON-RPC error, and any other answer 502 with {"error": ...},
// each saying "result of N bytes exceeds the 6 MB Lambda response limit".
// When w is an http.Flusher, so is the writer h sees (with a Flush that
// does nothing), so that mcp-go answers POSTs as an SSE body, returned
// whole; otherwise it is not (mcp-go refuses a GET stream with 405).
func Response(h http.Handler, limit int) http.Handler {
	if limit <= 0 {
		limit = PayloadLimit
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var reqBody []byte
		if r.Method == http.MethodPost {
			// Read once: the handler behind gets the same bytes.
			b, err := httpserve.ReadBody(r, -1)
			if err != nil {
				http.Error(w, "could not read the request body: "+err.Error(), http.StatusBadRequest)
				return
			}
			reqBody = b
		}
		cw := &captureWriter{header: w.Header(), status: http.StatusOK}
		var out http.ResponseWriter = cw
		if _, ok := w.(http.Flusher); ok {
			out = flushCaptureWriter{cw}
		}
		h.ServeHTTP(out, r)
		size := EncodedSize(cw.header, cw.body.Bytes())
		if size <= limit {
			w.WriteHeader(cw.status)
			_, _ = w.Write(cw.body.Bytes())
			return
		}
		tooLarge(w, reqBody, size)
	})
}

// Message is the text of the error for an answer of size bytes.
func Message(size int) string {
	return fmt.Sprintf("result of %d bytes exceeds the 6 MB Lambda response limit; "+
		"ask for less (narrower arguments, one page of the data), or run the gateway where responses can be larger "+
		"(a Function URL in RESPONSE_STREAM mode, or the local runtime); MCP_GATEWAY_MAX_RESULT_BYTES cuts upstream results off earlier", size)
}

// tooLarge writes the replacement answer.
func tooLarge(w http.ResponseWriter, reqBody []byte, size int) {
	msg := Message(size)
	h := w.Header()
	for k := range h {
		delete(h, k)
	}
	var rpc struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
	}
	if json.Unmarshal(reqBody, &rpc) != nil || rpc.JSONRPC == "" || rpc.Method == "" {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadGateway)
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(map[string]string{"error": msg})
		return
	}
	id := rpc.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	out := map[string]any{"jsonrpc": "2.0", "id": id}
	if rpc.Method == "tools/call" {
		out["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": msg}}, "isError": true}
	} else {
		out["error"] = map[string]any{"code": -32603, "message": msg}
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(out)
}

// EncodedSize is the size of a Lambda HTTP response with these headers
// and body once the runtime has encoded it as JSON: the body as a JSON
// string (escaped as encoding/json escapes, HTML characters included), or
// base64 when it is not valid UTF-8, plus the headers and an envelope.
func EncodedSize(header http.Header, body []byte) int {
	n := envelope
	for k, vs := range header {
		for _, v := range vs {
			n += 2 * (jsonStringLen([]byte(k)) + jsonStringLen([]byte(v)) + 2)
		}
	}
	if !utf8.Valid(body) {
		return n + (len(body)+2)/3*4 + 2
	}
	return n + jsonStringLen(body)
}

// jsonStringLen is len(json.Marshal(string(b))) for valid UTF-8 b.
func jsonStringLen(b []byte) int {
	n := 2
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == '\u2028' || r == '\u2029' {
			n += 6
		} else {
			n += size
		}
		i += size
	}
	return n
}

// captureWriter holds an answer until the handler is done.
type captureWriter struct {
	header      http.Header
	status      int
	wroteHeader bool
	body        bytes.Buffer
}

func (c *captureWriter) Header() http.Header { return c.header }

func (c *captureWriter) WriteHeader(code int) {
	if !c.wroteHeader {
		c.status, c.wroteHeader = code, true
	}
}

func (c *captureWriter) Write(p []byte) (int, error) {
	c.wroteHeader = true
	return c.body.Write(p)
}

// flushCaptureWriter is a captureWriter over a writer that can flush:
// its Flush does nothing, the answer is returned whole.
type flushCaptureWriter struct{ *captureWriter }

func (flushCaptureWriter) Flush() {}
