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
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/toolrag/mcp-gateway/pkg/aws/secrets/internal/awsjsonfake"
)

// Request is one request as received.
type Request = awsjsonfake.Request[GetSecretValueFields]

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

// Server is a running fake. Fail, Hold and Requests come from the core
// shared with ssmtest.
type Server struct {
	*awsjsonfake.Server[GetSecretValueFields]
	Client *secretsmanager.Client // static credentials, region us-east-1, no retries

	mu       sync.Mutex
	secrets  map[string]Secret
	versions map[string]int // name → version counter, for VersionId
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
	s.Server = awsjsonfake.New(t, "secretsmanager.GetSecretValue", "Message", s.serve)
	s.Client = NewClient(s.URL)
	return s
}

// NewClient returns a Secrets Manager client for a fake at url. It does not
// retry, so that tests of failures do not wait for back-off.
func NewClient(url string) *secretsmanager.Client {
	return secretsmanager.NewFromConfig(awsjsonfake.Config(url))
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

func (s *Server) serve(w http.ResponseWriter, req Request) {
	switch {
	case req.Input.SecretId == "":
		s.WriteError(w, 400, "InvalidParameterException", "You must provide SecretId.")
		return
	case req.Input.VersionId != nil || (req.Input.VersionStage != nil && *req.Input.VersionStage != "AWSCURRENT"):
		s.WriteError(w, 400, "InvalidParameterException", "this fake holds only the AWSCURRENT version of each secret")
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
		s.WriteError(w, 400, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
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
	awsjsonfake.WriteJSON(w, out)
}

// versionID is a UUID-shaped version id that changes with each Put.
func versionID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }
