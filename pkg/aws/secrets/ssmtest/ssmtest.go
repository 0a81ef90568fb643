// Package ssmtest runs an in-process fake of AWS Systems Manager Parameter
// Store's GetParametersByPath for tests of code that reads parameters with
// the real SDK client. There is no SSM emulator on the test machines (no
// LocalStack, no moto), so this speaks the wire protocol itself:
// awsJson1_1, POST / with X-Amz-Target AmazonSSM.GetParametersByPath, at
// most 10 parameters a page (SSM's limit) with a NextToken, SecureString
// values returned in clear only with WithDecryption, and errors as
// HTTP 400 {"__type": ..., "message": ...}.
package ssmtest

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/toolrag/mcp-gateway/pkg/aws/secrets/internal/awsjsonfake"
)

// Request is one GetParametersByPath request as received.
type Request = awsjsonfake.Request[GetByPathFields]

// GetByPathFields are the request members the fake understands.
type GetByPathFields struct {
	Path           string
	Recursive      *bool
	WithDecryption *bool
	MaxResults     *int
	NextToken      *string
}

// Parameter is one stored parameter.
type Parameter struct {
	Value  string
	Secure bool // SecureString (else String)
}

// Server is a running fake. Fail, Hold and Requests come from the core
// shared with smtest.
type Server struct {
	*awsjsonfake.Server[GetByPathFields]
	Client *ssm.Client // static credentials, region us-east-1, no retries

	mu       sync.Mutex
	params   map[string]Parameter
	pageSize int
}

// New starts a fake holding params (full names such as /toolrag/prod/TOKEN,
// SecureString); it stops when the test ends.
func New(t testing.TB, params map[string]string) *Server {
	t.Helper()
	s := &Server{params: map[string]Parameter{}, pageSize: 10}
	for k, v := range params {
		s.params[k] = Parameter{Value: v, Secure: true}
	}
	s.Server = awsjsonfake.New(t, "AmazonSSM.GetParametersByPath", "message", s.serve)
	s.Client = NewClient(s.URL)
	return s
}

// NewClient returns an SSM client for a fake at url. It does not retry, so
// that tests of failures do not wait for back-off.
func NewClient(url string) *ssm.Client {
	return ssm.NewFromConfig(awsjsonfake.Config(url))
}

// Put stores a parameter.
func (s *Server) Put(name string, p Parameter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.params[name] = p
}

// Delete removes a parameter.
func (s *Server) Delete(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.params, name)
}

// SetPageSize sets how many parameters a page holds when the request has
// no MaxResults (SSM's default and maximum is 10).
func (s *Server) SetPageSize(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pageSize = n
}

func (s *Server) serve(w http.ResponseWriter, req Request) {
	in := req.Input
	if !strings.HasPrefix(in.Path, "/") {
		s.WriteError(w, 400, "ValidationException", "Parameter path: must begin with /")
		return
	}
	path := in.Path
	if !strings.HasSuffix(path, "/") {
		path += "/"
	}
	recursive := in.Recursive != nil && *in.Recursive
	decrypt := in.WithDecryption != nil && *in.WithDecryption

	s.mu.Lock()
	size := s.pageSize
	var names []string
	for n := range s.params {
		rest, ok := strings.CutPrefix(n, path)
		if ok && rest != "" && (recursive || !strings.Contains(rest, "/")) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if in.MaxResults != nil {
		if *in.MaxResults < 1 || *in.MaxResults > 10 {
			s.mu.Unlock()
			s.WriteError(w, 400, "ValidationException", "1 validation error detected: Value at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to 10")
			return
		}
		size = *in.MaxResults
	}
	start := 0
	if in.NextToken != nil && *in.NextToken != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(*in.NextToken, "page-"))
		if err != nil || n < 0 || n > len(names) {
			s.mu.Unlock()
			s.WriteError(w, 400, "InvalidNextToken", "The specified token is not valid.")
			return
		}
		start = n
	}
	end := min(start+size, len(names))
	type param struct {
		ARN              string
		DataType         string
		LastModifiedDate float64
		Name             string
		Type             string
		Value            string
		Version          int64
	}
	out := struct {
		Parameters []param
		NextToken  string `json:",omitempty"`
	}{Parameters: []param{}}
	for _, n := range names[start:end] {
		p := s.params[n]
		typ, val := "String", p.Value
		if p.Secure {
			typ = "SecureString"
			if !decrypt {
				val = "AQICAHencrypted" + strconv.Itoa(len(p.Value)) // ciphertext, not the value
			}
		}
		out.Parameters = append(out.Parameters, param{
			ARN: "arn:aws:ssm:us-east-1:123456789012:parameter" + n, DataType: "text",
			LastModifiedDate: float64(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()),
			Name:             n, Type: typ, Value: val, Version: 1,
		})
	}
	if end < len(names) {
		out.NextToken = fmt.Sprintf("page-%d", end)
	}
	s.mu.Unlock()
	awsjsonfake.WriteJSON(w, out)
}
