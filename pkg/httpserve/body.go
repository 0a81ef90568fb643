package httpserve

import (
	"bytes"
	"io"
	"math"
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

// ReadBody returns r's body, at most limit+1 bytes of it (all of it when
// limit < 0: a caller that sees more than limit bytes refuses the
// request). The body is read once per request: ReadBody leaves the bytes
// in r.Body, where the handler behind (or a later ReadBody, which returns
// them without reading or copying again) finds them. So a chain of
// handlers that each need the body — the Lambda adapter's size check, the
// gateway's decode — shares one read of it.
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	h, ok := r.Body.(*heldBody)
	if !ok {
		h = &heldBody{rest: r.Body}
	}
	r.Body = h
	want := int64(math.MaxInt64)
	if limit >= 0 {
		want = limit + 1
	}
	if !h.eof && int64(len(h.b)) < want {
		var buf bytes.Buffer
		if n := r.ContentLength; n > 0 && n < want && len(h.b) == 0 {
			buf.Grow(int(n) + bytes.MinRead) // room to see the EOF without growing
		}
		buf.Write(h.b)
		n, err := buf.ReadFrom(io.LimitReader(h.rest, want-int64(len(h.b))))
		if n < want-int64(len(h.b)) && err == nil {
			h.eof = true
		}
		h.b = buf.Bytes()
		if err != nil {
			return nil, err
		}
	}
	h.r.Reset(h.b)
	if int64(len(h.b)) > want {
		return h.b[:want], nil
	}
	return h.b, nil
}

// heldBody is a request body ReadBody has read (b), and whatever of it was
// not read (rest, after b).
type heldBody struct {
	b    []byte
	r    bytes.Reader
	eof  bool // rest is at its end
	rest io.ReadCloser
}

func (h *heldBody) Read(p []byte) (int, error) {
	if h.r.Len() > 0 || h.eof {
		return h.r.Read(p)
	}
	return h.rest.Read(p)
}

func (h *heldBody) Close() error { return h.rest.Close() }
