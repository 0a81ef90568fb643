// Package smtest runs an in-process fake of AWS Secrets Manager's
// GetSecretValue for tests of code that reads secrets with the real SDK
// client. There is no Secrets Manager emulator on the test machines (no
// LocalStack, no moto), so this speaks the wire protocol itself: awsJson1_1,
// POST / with X-Amz-Target secretsmanager.GetSecretValue and a body
// {"SecretId": ...}; the answer is {"ARN", "Name", "SecretString" or
// "SecretBinary", "VersionId", "VersionStages", "CreatedDate"}, and errors
// are HTTP 400 (500 for InternalServiceError) {"__type": ..., "Message": ...}
// as Secrets Manager sends them.
package smtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// Request is one request as received.
type Request struct {
	Target      string // X-Amz-Target header
	ContentType string
	Body        []byte         // raw JSON body
	Fields      map[string]any // Body decoded
	Input       GetSecretValueFields
}

// GetSecretValueFields are the request members of GetSecretValue.
type GetSecretValueFields struct {
	SecretId     string
	VersionId    *string
	VersionStage *string
}

// Secret is one stored secret's current version: a string, or binary data
// when Binary is not nil.
type Secret struct {
	String string
	Binary []byte
}

// Server is a running fake.
type Server struct {
	URL    string
	Client *secretsmanager.Client // static credentials, region us-east-1, no retries

	mu       sync.Mutex
	secrets  map[string]Secret
	versions map[string]int // name → version counter, for VersionId
	fail     *apiError
	hold     chan struct{} // requests wait for it to close; nil = answer at once
	requests []Request
}

type apiError struct {
	status  int
	typ     string
	message string
}

// New starts a fake holding secrets (names such as /toolrag/prod/TOKEN →
// SecretString); it stops when the test ends.
func New(t testing.TB, secrets map[string]string) *Server {
	t.Helper()
	s := &Server{secrets: map[string]Secret{}, versions: map[string]int{}}
	for k, v := range secrets {
		s.secrets[k] = Secret{String: v}
		s.versions[k] = 1
	}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	t.Cleanup(s.release) // before srv.Close: do not leave requests waiting
	s.URL = srv.URL
	s.Client = NewClient(srv.URL)
	return s
}

// NewClient returns a Secrets Manager client for a fake at url. It does not
// retry, so that tests of failures do not wait for back-off.
func NewClient(url string) *secretsmanager.Client {
	return secretsmanager.New(secretsmanager.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(url),
		Credentials:      credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
		RetryMaxAttempts: 1,
	})
}

// ARN returns the ARN the fake reports for name. Like Secrets Manager's, it
// ends in "-" and six random-looking characters.
func ARN(name string) string {
	return "arn:aws:secretsmanager:us-east-1:123456789012:secret:" + name + "-AbC123"
}

// Put stores a new current version of a secret.
func (s *Server) Put(name string, sec Secret) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets[name] = sec
	s.versions[name]++
}

// Delete removes a secret.
func (s *Server) Delete(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.secrets, name)
}

// Fail makes every request answer with an error (status 400 for
// AccessDeniedException and other client errors, 500 for
// InternalServiceError); an empty typ clears it.
func (s *Server) Fail(status int, typ, message string) {
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
func (s *Server) Hold() (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold == nil {
		s.hold = make(chan struct{})
	}
	return s.release
}

func (s *Server) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold != nil {
		close(s.hold)
		s.hold = nil
	}
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Requestid", "00000000-0000-0000-0000-000000000000")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": typ, "Message": msg})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Target: r.Header.Get("X-Amz-Target"), ContentType: r.Header.Get("Content-Type"), Body: body}
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
		writeError(w, 404, "UnknownOperationException", "POST / only")
		return
	case req.Target != "secretsmanager.GetSecretValue":
		writeError(w, 400, "UnknownOperationException", "this fake serves secretsmanager.GetSecretValue only, not "+req.Target)
		return
	case fail != nil:
		writeError(w, fail.status, fail.typ, fail.message)
		return
	case req.Input.SecretId == "":
		writeError(w, 400, "InvalidParameterException", "You must provide SecretId.")
		return
	case req.Input.VersionId != nil || (req.Input.VersionStage != nil && *req.Input.VersionStage != "AWSCURRENT"):
		writeError(w, 400, "InvalidParameterException", "this fake holds only the AWSCURRENT version of each secret")
		return
	}
	name := req.Input.SecretId
	if n, ok := strings.CutPrefix(name, "arn:"); ok {
		name = ""
		s.mu.Lock()
		for k := range s.secrets {
			if ARN(k) == "arn:"+n {
				name = k
			}
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	sec, ok := s.secrets[name]
	version := s.versions[name]
	s.mu.Unlock()
	if !ok {
		writeError(w, 400, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
		return
	}
	out := struct {
		ARN           string
		CreatedDate   float64
		Name          string
		SecretBinary  []byte  `json:",omitempty"` // base64, as the protocol sends blobs
		SecretString  *string `json:",omitempty"`
		VersionId     string
		VersionStages []string
	}{
		ARN: ARN(name), CreatedDate: float64(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()),
		Name: name, VersionId: versionID(version), VersionStages: []string{"AWSCURRENT"},
	}
	if sec.Binary != nil {
		out.SecretBinary = sec.Binary
	} else {
		out.SecretString = aws.String(sec.String)
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Requestid", "00000000-0000-0000-0000-000000000000")
	_ = json.NewEncoder(w).Encode(out)
}

// versionID is a UUID-shaped version id that changes with each Put.
func versionID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }
