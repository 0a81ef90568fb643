package dynamo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// One DynamoDB Local for the whole test binary (see internal/testenv).
func TestMain(m *testing.M) { testenv.Main(m) }

var (
	clientOnce   sync.Once
	sharedClient *dynamodb.Client
	clientErr    error
	testMetrics  = &Metrics{}
)

func testClient(t testing.TB) *dynamodb.Client {
	t.Helper()
	ep := testenv.DynamoDB(t)
	clientOnce.Do(func() {
		sharedClient, clientErr = NewClient(context.Background(), ep, testMetrics)
	})
	if clientErr != nil {
		t.Fatal(clientErr)
	}
	return sharedClient
}

// testTables creates the requested tables under unique names and deletes
// them when the test ends. which is any of "tools", "keys", "registry",
// "sessions", "callseq".
func testTables(t testing.TB, which ...string) (*dynamodb.Client, Tables) {
	t.Helper()
	c := testClient(t)
	prefix := testenv.UniqueName(t, "t-")
	var tb Tables
	for _, w := range which {
		switch w {
		case "tools":
			tb.Tools = prefix + "-tools"
		case "keys":
			tb.Keys = prefix + "-keys"
		case "registry":
			tb.Registry = prefix + "-registry"
		case "sessions":
			tb.Sessions = prefix + "-sessions"
		case "callseq":
			tb.CallSeq = prefix + "-callseq"
		default:
			t.Fatalf("unknown table kind %q", w)
		}
	}
	if err := CreateTables(context.Background(), c, tb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, name := range []string{tb.Tools, tb.Keys, tb.Registry, tb.Sessions, tb.CallSeq} {
			if name != "" {
				_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
			}
		}
	})
	return c, tb
}

// rawItems returns every item of a table.
func rawItems(t testing.TB, c *dynamodb.Client, table string) []item {
	t.Helper()
	items, err := scanAll(context.Background(), c, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// proxyClient is a client (counting into m, which may be nil) of DynamoDB
// Local through a proxy that first offers every request, its body read, to
// intercept: intercept answers it itself (true) or lets it through (false).
func proxyClient(t testing.TB, m *Metrics, intercept func(w http.ResponseWriter, r *http.Request, body []byte) bool) *dynamodb.Client {
	t.Helper()
	target, err := url.Parse(testenv.DynamoDB(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, fmt.Sprintf("proxy: unreadable request: %v", err), http.StatusInternalServerError)
			return
		}
		if intercept(w, r, body) {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(context.Background(), srv.URL, m)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// operation is the DynamoDB operation a request calls ("Scan", ...).
func operation(r *http.Request) string {
	_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	return op
}

// writeAPIError answers a DynamoDB error: 400 with the error type (its
// full name) and message.
func writeAPIError(w http.ResponseWriter, typ, message string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(http.StatusBadRequest)
	fmt.Fprintf(w, `{"__type":%q,"message":%q}`, typ, message)
}
