package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/toolrag/mcp-gateway/internal/localtest"
	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/app"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/aws/s3bucket/s3test"
	"github.com/toolrag/mcp-gateway/pkg/awsrt"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// One DynamoDB Local for the whole test binary (see internal/testenv).
func TestMain(m *testing.M) { testenv.Main(m) }

// runtime is one runtime's gateway over the same upstream, ready to serve.
type runtime struct {
	name    string
	handler http.Handler
}

// localRuntime builds the local gateway (SQLite, index directory) over
// echo and syncs it.
func localRuntime(t *testing.T, echo string) runtime {
	g := localtest.New(t, localtest.Options{
		Registry: fmt.Sprintf("servers:\n  echo:\n    transport: streamable_http\n    url: %s\n", echo),
		Keys:     "keys:\n  - id: agent\n    secret: k-agent\n    servers:\n      echo: {}\n",
		Embedder: embed.NewBuiltin(),
	})
	return runtime{"local", g.Handler}
}

// awsRuntime builds the gateway function (DynamoDB Local, an S3 emulator)
// over echo, after one run of the sync function.
func awsRuntime(t *testing.T, echo string) runtime {
	ctx := context.Background()
	ddb, err := dynamo.NewClient(ctx, testenv.DynamoDB(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	prefix := testenv.UniqueName(t, "h-")
	tb := dynamo.Tables{Tools: prefix + "-tools", Keys: prefix + "-keys", Registry: prefix + "-registry", Sessions: prefix + "-sessions"}
	if err := dynamo.CreateTables(ctx, ddb, tb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, name := range []string{tb.Tools, tb.Keys, tb.Registry, tb.Sessions} {
			_, _ = ddb.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		}
	})
	doc, err := config.EncodeServerConfig(upstream.ServerConfig{Transport: upstream.TransportStreamableHTTP, URL: echo})
	if err != nil {
		t.Fatal(err)
	}
	if err := dynamo.NewRegistryStore(ddb, tb.Registry).PutServer(ctx, "echo", doc); err != nil {
		t.Fatal(err)
	}
	env, err := config.FromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	s3 := s3test.New(t, "toolrag-index")
	cfg := awsrt.Config{Env: env, Tables: tb, Bucket: "toolrag-index", DynamoDB: ddb, S3: s3.Client,
		Embedder: embed.NewBuiltin(), Logger: slog.New(slog.DiscardHandler)}
	s, err := awsrt.NewSyncer(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.RunServers(ctx, indexer.ModeFull, nil); err != nil {
		t.Fatal(err)
	}
	g, err := awsrt.NewGatewayFunction(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return runtime{"aws-lambda", g}
}

// GET /health has one shape in every runtime: exactly the fields of
// app.Health, with the same values for the same catalog and index.
func TestHealthSameInEveryRuntime(t *testing.T) {
	echo := testenv.StartEcho(t)
	var got []app.Health
	for _, rt := range []runtime{localRuntime(t, echo), awsRuntime(t, echo)} {
		rec := httptest.NewRecorder()
		rt.handler.ServeHTTP(rec, httptest.NewRequest("GET", "/health", nil))
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: GET /health: %d %q %q", rt.name, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
		dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
		dec.DisallowUnknownFields()
		var h app.Health
		if err := dec.Decode(&h); err != nil {
			t.Fatalf("%s: GET /health %s is not app.Health: %v", rt.name, rec.Body, err)
		}
		var fields map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &fields)
		if len(fields) != 8 {
			t.Errorf("%s: GET /health has %d fields, want the 8 of app.Health: %s", rt.name, len(fields), rec.Body)
		}
		if h.Runtime != rt.name || h.Status != "ok" || !h.Ready || h.Version != app.Version ||
			h.CatalogSize == 0 || h.IndexSize != h.CatalogSize || h.Fallback || h.StartedAt.IsZero() || h.StartedAt.After(time.Now()) {
			t.Errorf("%s: GET /health = %+v", rt.name, h)
		}
		h.Runtime, h.StartedAt = "", time.Time{}
		got = append(got, h)
	}
	if got[0] != got[1] {
		t.Errorf("GET /health differs between the runtimes beyond runtime and started_at:\nlocal %+v\naws   %+v", got[0], got[1])
	}
}
