// Package awsjsonfake is the core shared by the SSM and Secrets Manager
// fakes (ssmtest, smtest): an httptest server speaking AWS's awsJson1_1
// protocol for one operation (POST / with X-Amz-Target), recording every
// request, answering errors as {"__type": ..., "<message key>": ...},
// and letting a test make every request fail or wait.
package awsjsonfake

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Config is the configuration of a client of a fake at url: static
// credentials, region us-east-1, and no retries, so that tests of failures
// do not wait for back-off.
func Config(url string) aws.Config {
	return aws.Config{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(url),
		Credentials:      credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
		RetryMaxAttempts: 1,
	}
}

// Request is one request as received, its body decoded into In.
type Request[In any] struct {
	Target      string // X-Amz-Target header
	ContentType string
	Body        []byte         // raw JSON body
	Fields      map[string]any // Body decoded
	Input       In             // Body decoded into the operation's fields
}

// Server is a running fake of one operation.
type Server[In any] struct {
	URL string

	target     string // the X-Amz-Target served
	messageKey string // "message" (SSM) or "Message" (Secrets Manager)
	handle     func(w http.ResponseWriter, req Request[In])

	mu       sync.Mutex
	fail     *apiError
	hold     chan struct{} // requests wait for it to close; nil = answer at once
	requests []Request[In]
}

type apiError struct {
	status  int
	typ     string
	message string
}

// New starts a fake answering target with handle (after the checks every
// fake shares: POST /, the target, a failure set by Fail); it stops when
// the test ends. messageKey is the error body's message member.
func New[In any](t testing.TB, target, messageKey string, handle func(w http.ResponseWriter, req Request[In])) *Server[In] {
	t.Helper()
	s := &Server[In]{target: target, messageKey: messageKey, handle: handle}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	t.Cleanup(s.release) // before srv.Close: do not leave requests waiting
	s.URL = srv.URL
	return s
}

// Fail makes every request answer with an error (status 400 for
// AccessDeniedException and other client errors, 500 for internal
// errors); an empty typ clears it.
func (s *Server[In]) Fail(status int, typ, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if typ == "" {
		s.fail = nil
		return
	}
	s.fail = &apiError{status: status, typ: typ, message: message}
}

// Hold makes requests wait (after they are recorded) until the returned
// function is called, so that a test can have several in flight at once.
func (s *Server[In]) Hold() (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold == nil {
		s.hold = make(chan struct{})
	}
	return s.release
}

func (s *Server[In]) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold != nil {
		close(s.hold)
		s.hold = nil
	}
}

// Requests returns the requests received so far.
func (s *Server[In]) Requests() []Request[In] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request[In](nil), s.requests...)
}

// WriteError answers an API error.
func (s *Server[In]) WriteError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Requestid", "00000000-0000-0000-0000-000000000000")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": typ, s.messageKey: msg})
}

// WriteJSON answers out as the operation's result.
func WriteJSON(w http.ResponseWriter, out any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Requestid", "00000000-0000-0000-0000-000000000000")
	_ = json.NewEncoder(w).Encode(out)
}

func (s *Server[In]) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request[In]{Target: r.Header.Get("X-Amz-Target"), ContentType: r.Header.Get("Content-Type"), Body: body}
	_ = json.Unmarshal(body, &req.Fields)
	_ = json.Unmarshal(body, &req.Input)
	s.mu.Lock()
	s.requests = append(s.requests, req)
	fail, hold := s.fail, s.hold
	s.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/":
		s.WriteError(w, 404, "UnknownOperationException", "POST / only")
	case req.Target != s.target:
		s.WriteError(w, 400, "UnknownOperationException", "this fake serves "+s.target+" only, not "+req.Target)
	case fail != nil:
		s.WriteError(w, fail.status, fail.typ, fail.message)
	default:
		s.handle(w, req)
	}
}
