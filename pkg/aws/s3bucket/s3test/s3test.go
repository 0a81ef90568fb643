// Package s3test runs an in-process S3 emulator (gofakes3 on an in-memory
// backend behind httptest) for tests of code that talks to S3.
package s3test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Server is a running emulator.
type Server struct {
	URL     string
	Backend *s3mem.Backend
	Client  *s3.Client // path-style client with static credentials

	// Requests counts HTTP requests by method.
	Gets, Puts atomic.Int64

	mu   sync.Mutex
	hook func(r *http.Request)
}

// New starts an emulator with the given buckets; it stops when the test
// ends.
func New(t testing.TB, buckets ...string) *Server {
	t.Helper()
	backend := s3mem.New()
	for _, b := range buckets {
		if err := backend.CreateBucket(b); err != nil {
			t.Fatalf("s3test: create bucket %s: %v", b, err)
		}
	}
	s := &Server{Backend: backend}
	fake := gofakes3.New(backend).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			s.Gets.Add(1)
		case http.MethodPut:
			s.Puts.Add(1)
		}
		s.mu.Lock()
		hook := s.hook
		s.mu.Unlock()
		if hook != nil {
			hook(r)
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	s.Client = NewClient(srv.URL)
	return s
}

// NewClient returns an S3 client for an emulator at url.
func NewClient(url string) *s3.Client {
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(url),
		UsePathStyle: true,
		// Ranged GETs carry no whole-object checksum; do not log each skip.
		DisableLogOutputChecksumValidationSkipped: true,
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
	})
}

// OnRequest sets a function called before each request is served (nil
// removes it).
func (s *Server) OnRequest(f func(r *http.Request)) {
	s.mu.Lock()
	s.hook = f
	s.mu.Unlock()
}

// PutRaw stores an object directly in the backend, bypassing HTTP (and the
// request hook and counters).
func (s *Server) PutRaw(t testing.TB, bucket, key string, body []byte) {
	t.Helper()
	if _, err := s.Backend.PutObject(bucket, key, map[string]string{}, bytes.NewReader(body), int64(len(body)), nil); err != nil {
		t.Fatalf("s3test: put %s/%s: %v", bucket, key, err)
	}
}
