package awsrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
	"github.com/toolrag/mcp-gateway/pkg/config"
)

func TestConfigFromEnv(t *testing.T) {
	base := map[string]string{"TOOL_RAG_INDEX_BUCKET": "b"}
	tests := []struct {
		name    string
		vars    map[string]string
		check   func(Config) error
		wantErr string
	}{
		{"defaults", nil, func(c Config) error {
			if c.Prefix != "index/" || c.IndexRefresh != 30*time.Second || c.KeyCacheTTL != 30*time.Second || c.Env.MCPPath != "/mcp" || c.Tables.Tools != "toolrag-tools" {
				return fmt.Errorf("%+v", c)
			}
			return nil
		}, ""},
		{"contract", map[string]string{
			"TOOL_RAG_TOOLS_TABLE": "t", "TOOL_RAG_INDEX_PREFIX": "p/", "TOOL_RAG_SYNC_FUNCTION": "fn",
			"TOOL_RAG_INDEX_REFRESH": "5", "TOOL_RAG_KEY_CACHE_TTL": "0.5", "TOOL_RAG_REINDEX_INPLACE": "1",
			"MCP_GATEWAY_MCP_PATH": "/x", "AWS_ENDPOINT_URL": "http://127.0.0.1:4566",
		}, func(c Config) error {
			if c.Tables.Tools != "t" || c.Prefix != "p/" || c.SyncFunction != "fn" || c.IndexRefresh != 5*time.Second ||
				c.KeyCacheTTL != 500*time.Millisecond || !c.ReindexInPlace || c.Env.MCPPath != "/x" ||
				c.S3Endpoint != "http://127.0.0.1:4566" || c.LambdaEndpoint != "http://127.0.0.1:4566" || c.DynamoDBEndpoint != "http://127.0.0.1:4566" {
				return fmt.Errorf("%+v", c)
			}
			return nil
		}, ""},
		{"on-demand init waits 8s", map[string]string{"AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand"}, func(c Config) error {
			if c.InitWait != DefaultOnDemandInitWait {
				return fmt.Errorf("InitWait %s, want %s", c.InitWait, DefaultOnDemandInitWait)
			}
			return nil
		}, ""},
		{"provisioned init waits for the load", map[string]string{"AWS_LAMBDA_INITIALIZATION_TYPE": "provisioned-concurrency"}, func(c Config) error {
			if c.InitWait != 0 {
				return fmt.Errorf("InitWait %s, want 0", c.InitWait)
			}
			return nil
		}, ""},
		{"init wait set", map[string]string{"AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand", "TOOL_RAG_INIT_WAIT": "2.5"}, func(c Config) error {
			if c.InitWait != 2500*time.Millisecond {
				return fmt.Errorf("InitWait %s, want 2.5s", c.InitWait)
			}
			return nil
		}, ""},
		{"bedrock calls stop before the deadline", map[string]string{"TOOL_RAG_EMBEDDER": "bedrock"}, func(c Config) error {
			if c.Embed.Bedrock.DeadlineMargin != lambdahttp.DefaultMargin {
				return fmt.Errorf("Bedrock DeadlineMargin %s, want %s", c.Embed.Bedrock.DeadlineMargin, lambdahttp.DefaultMargin)
			}
			return nil
		}, ""},
		{"bad init wait", map[string]string{"TOOL_RAG_INIT_WAIT": "-1"}, nil, "TOOL_RAG_INIT_WAIT"},
		{"bad refresh", map[string]string{"TOOL_RAG_INDEX_REFRESH": "soon"}, nil, "TOOL_RAG_INDEX_REFRESH"},
		{"bad inplace", map[string]string{"TOOL_RAG_REINDEX_INPLACE": "maybe"}, nil, "TOOL_RAG_REINDEX_INPLACE"},
		{"bad endpoint", map[string]string{"TOOL_RAG_S3_ENDPOINT": "localhost"}, nil, "S3 endpoint"},
		{"bad embedder", map[string]string{"TOOL_RAG_EMBEDDER": "magic"}, nil, "TOOL_RAG_EMBEDDER"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]string{}
			for k, v := range base {
				vars[k] = v
			}
			for k, v := range tc.vars {
				vars[k] = v
			}
			c, err := ConfigFromEnv(func(k string) string { return vars[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.check(c); err != nil {
				t.Fatal(err)
			}
		})
	}
	if _, err := NewGatewayFunction(context.Background(), Config{}); err == nil || !strings.Contains(err.Error(), "TOOL_RAG_INDEX_BUCKET") {
		t.Fatalf("NewGatewayFunction without a bucket: %v", err)
	}
}

func TestDecodeServerConfig(t *testing.T) {
	env := map[string]string{"TOKEN": "s3cret"}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		doc     string
		check   func(string, string, time.Duration) bool // url, auth header, timeout
		wantErr string
	}{
		{`{"transport":"streamable_http","url":"http://h/mcp"}`, func(u, _ string, _ time.Duration) bool { return u == "http://h/mcp" }, ""},
		{`{"transport":"sse","url":"http://h/sse","headers":{"Authorization":"Bearer ${TOKEN}"},"timeout":"45s"}`,
			func(_, a string, d time.Duration) bool { return a == "Bearer s3cret" && d == 45*time.Second }, ""},
		{`{"transport":"sse","url":"http://h/sse","headers":{"Authorization":"Bearer ${MISSING}"}}`, nil, "MISSING"},
		{`{"transport":"streamable_http"}`, nil, "needs a url"},
		{`{"transport":"streamable_http","url":"http://h","timeout":"soon"}`, nil, "timeout"},
		{`not json`, nil, "not a valid server entry"},
	}
	for _, tc := range tests {
		cfg, err := config.DecodeServerConfig(context.Background(), json.RawMessage(tc.doc), config.EnvSecrets(getenv))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err %v, want %q", tc.doc, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !tc.check(cfg.URL, cfg.Headers["Authorization"], cfg.Timeout) {
			t.Errorf("%s: %+v %v", tc.doc, cfg, err)
		}
	}
	// Round trip keeps the timeout.
	in, _ := config.DecodeServerConfig(context.Background(), json.RawMessage(tests[1].doc), config.EnvSecrets(getenv))
	raw, err := config.EncodeServerConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := config.DecodeServerConfig(context.Background(), raw, config.EnvSecrets(getenv))
	if err != nil || out.Timeout != 45*time.Second {
		t.Fatalf("round trip: %s → %+v %v", raw, out, err)
	}
	if errors.Is(err, nil) && !strings.Contains(string(raw), `"timeout":"45s"`) {
		t.Fatalf("encoded %s", raw)
	}
}
