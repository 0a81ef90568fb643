package httpserve

import (
	"io"
	"net/http"
)

// MaxDiscardBytes bounds how much of an over-limit request body
// DiscardRest reads before the connection is closed instead.
const MaxDiscardBytes = 64 << 20

// DiscardRest reads and drops what is left of a request body that is being
// refused (HTTP 413), up to MaxDiscardBytes, and asks for the connection to
// be closed after the response. Without it the server answers before the
// client has finished sending and closes the connection under it, and the
// client often sees a connection reset instead of the 413 (Go's server
// drains only 256 KiB of an unread body by itself).
func DiscardRest(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Connection", "close")
	if r.Body != nil {
		_, _ = io.CopyN(io.Discard, r.Body, MaxDiscardBytes)
	}
}
