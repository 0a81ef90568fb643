package upstream

import (
	"encoding/json"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
)

// RPCError is a JSON-RPC error an upstream server answered a request with,
// as the server sent it: its code, message and data. It is the cause of
// the *Error of that request (errors.As finds it), so the gateway can hand
// the server's own error on to its client intact, e.g. a -32042 URL
// elicitation with the URL the user has to open.
type RPCError struct {
	Code    int
	Message string
	Data    json.RawMessage // nil when the error had no data

	err error // mcp-go's reading of the error
}

func newRPCError(d *mcp.JSONRPCErrorDetails, err error) *RPCError {
	e := &RPCError{Code: d.Code, Message: d.Message, err: err}
	if d.Data != nil {
		if b, merr := json.Marshal(d.Data); merr == nil && string(b) != "null" {
			e.Data = b
		}
	}
	return e
}

func (e *RPCError) Error() string {
	return "error " + strconv.Itoa(e.Code) + ": " + e.Message
}

func (e *RPCError) Unwrap() error { return e.err }
