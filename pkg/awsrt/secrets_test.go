package awsrt

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/secrets"
	"github.com/toolrag/mcp-gateway/pkg/secrets/ssmtest"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// The variable the registry headers reference; tests set it to "" in the
// environment so that the SSM parameter is what counts.
const tokenVar = "AWSRT_TEST_UPSTREAM_TOKEN"

// authProxy fronts an upstream and lets through only requests that carry
// the expected Authorization header; it records every header it saw.
type authProxy struct {
	URL  string // MCP URL of the proxy
	want string
	mu   sync.Mutex
	seen []string
}

func newAuthProxy(t *testing.T, upstreamURL, want string) *authProxy {
	t.Helper()
	u, err := url.Parse(upstreamURL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	p := &authProxy{want: want}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		p.mu.Lock()
		p.seen = append(p.seen, got)
		p.mu.Unlock()
		if got != p.want {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL + u.Path
	return p
}

func (p *authProxy) headers() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// A registry entry whose header references ${VAR} gets the value from SSM
// Parameter Store (through the real SDK client against a fake speaking
// SSM's wire protocol) when the prefix is set; without it, or when SSM
// fails, the server is kept as misconfigured and never called without its
// credentials.
func TestRegistrySecretsFromSSM(t *testing.T) {
	t.Setenv(tokenVar, "")
	const prefix = "/toolrag/test/"
	const token = "tok-from-ssm-7f3a"
	echo := startEcho(t)
	tests := []struct {
		name      string
		prefix    string
		params    map[string]string
		deny      bool
		wantStale []string // substrings of the sync's stale reason (and the health function's down reason: the first); nil = synced
		ssmCalls  int      // SSM calls by the sync, gateway (success only) and health functions
	}{
		{name: "value from SSM", prefix: prefix, params: map[string]string{prefix + tokenVar: token, prefix + "OTHER": "x"},
			ssmCalls: 3}, // one read per function instance (sync, gateway, health), not per header
		{name: "access denied", prefix: prefix, params: map[string]string{prefix + tokenVar: token}, deny: true, ssmCalls: 2,
			wantStale: []string{"header Authorization needs secret " + tokenVar + ": reading SSM parameters under " + prefix + ": ", "AccessDeniedException", "not authorized to perform: ssm:GetParametersByPath"}},
		{name: "parameter missing", prefix: prefix, params: map[string]string{prefix + "OTHER": "x"}, ssmCalls: 2,
			wantStale: []string{"header Authorization needs secret " + tokenVar + ": neither the environment variable " + tokenVar + " nor the SSM parameter " + prefix + tokenVar + " is set"}},
		{name: "no prefix: environment only, as before", prefix: "", params: map[string]string{prefix + tokenVar: token}, ssmCalls: 0,
			wantStale: []string{"header Authorization needs environment variable " + tokenVar + ", which is not set"}},
		{name: "prefix that is not an SSM path", prefix: "toolrag/test", params: map[string]string{prefix + tokenVar: token}, ssmCalls: 0,
			wantStale: []string{"needs secret " + tokenVar, "TOOL_RAG_SECRETS_PREFIX", "is not an SSM parameter path"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			proxy := newAuthProxy(t, echo, "Bearer "+token)
			doc, err := EncodeServerConfig(upstream.ServerConfig{
				Transport: upstream.TransportStreamableHTTP, URL: proxy.URL,
				Headers: map[string]string{"Authorization": "Bearer ${" + tokenVar + "}"},
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.registry.PutServer(context.Background(), "echo", doc); err != nil {
				t.Fatal(err)
			}
			fake := ssmtest.New(t, tc.params)
			if tc.deny {
				fake.Fail(400, "AccessDeniedException", "User: arn:aws:sts::123456789012:assumed-role/sync/fn is not authorized to perform: ssm:GetParametersByPath on resource: arn:aws:ssm:us-east-1:123456789012:parameter"+prefix)
			}
			var logs bytes.Buffer
			cfg := e.config(t)
			cfg.SecretsPrefix, cfg.SSM = tc.prefix, fake.Client
			cfg.Logger = slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))

			s, err := NewSyncer(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			rep, err := s.Handle(context.Background(), nil)
			if err != nil {
				t.Fatalf("sync: %v", err)
			}
			if tc.wantStale == nil {
				if rep.Sync.Synced != 1 || len(rep.Sync.Stale) != 0 || rep.Index.Tools == 0 {
					t.Fatalf("sync did not reach the upstream: %+v", rep)
				}
				for _, h := range proxy.headers() {
					if h != "Bearer "+token {
						t.Fatalf("upstream saw Authorization %q", h)
					}
				}
				// The gateway and the health function resolve it too.
				g := e.gateway(t, func(c *Config) { c.SecretsPrefix, c.SSM = tc.prefix, fake.Client })
				if tools, err := g.Upstreams.ListTools(context.Background(), "echo"); err != nil || len(tools) == 0 {
					t.Fatalf("gateway → upstream: %d tools, %v", len(tools), err)
				}
				hc := e.config(t)
				hc.SecretsPrefix, hc.SSM = tc.prefix, fake.Client
				hr, err := ProbeHealth(context.Background(), hc)
				if err != nil || len(hr.Up) != 1 || len(hr.Down) != 0 {
					t.Fatalf("health: %+v %v", hr, err)
				}
			} else {
				reason := rep.Sync.Stale["echo"]
				for _, w := range tc.wantStale {
					if !strings.Contains(reason, w) {
						t.Errorf("stale reason %q does not contain %q", reason, w)
					}
				}
				hc := e.config(t)
				hc.SecretsPrefix, hc.SSM = tc.prefix, fake.Client
				hr, err := ProbeHealth(context.Background(), hc)
				if err != nil || !strings.Contains(hr.Down["echo"], tc.wantStale[0]) {
					t.Fatalf("health: %+v %v; want echo down with %q", hr, err, tc.wantStale[0])
				}
				if n := len(proxy.headers()); n != 0 {
					t.Fatalf("the upstream was called %d times without its credentials", n)
				}
			}
			if n := len(fake.Requests()); n != tc.ssmCalls {
				t.Fatalf("%d SSM calls, want %d", n, tc.ssmCalls)
			}
			if strings.Contains(logs.String(), token) {
				t.Fatalf("logs contain the secret value:\n%s", logs.String())
			}
		})
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// DecodeServerConfigWith with the resolver: the environment wins, every
// header is resolved, and a failure names the header and the variable.
func TestDecodeServerConfigWith(t *testing.T) {
	t.Setenv("AWSRT_TEST_ENV_ONLY", "from-env")
	t.Setenv("AWSRT_TEST_BOTH", "env-wins")
	const prefix = "/p/"
	fake := ssmtest.New(t, map[string]string{prefix + "AWSRT_TEST_BOTH": "ssm-loses", prefix + "AWSRT_TEST_SSM_ONLY": "from-ssm"})
	r, err := secrets.New(secrets.Config{Prefix: prefix, Client: fake.Client, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		headers map[string]string
		want    map[string]string
		wantErr string
	}{
		{map[string]string{"A": "${AWSRT_TEST_ENV_ONLY}", "B": "x ${AWSRT_TEST_BOTH} ${AWSRT_TEST_SSM_ONLY}"},
			map[string]string{"A": "from-env", "B": "x env-wins from-ssm"}, ""},
		{map[string]string{"X-Key": "${AWSRT_TEST_NONE}"}, nil,
			"header X-Key needs secret AWSRT_TEST_NONE: neither the environment variable AWSRT_TEST_NONE nor the SSM parameter /p/AWSRT_TEST_NONE is set"},
		{map[string]string{"X-Key": "${BAD-NAME}"}, nil, `header X-Key needs secret BAD-NAME: "BAD-NAME" is not a valid secret name`},
	}
	for _, tc := range tests {
		raw, _ := json.Marshal(map[string]any{"transport": "sse", "url": "http://h/sse", "headers": tc.headers, "timeout": "5s"})
		cfg, err := DecodeServerConfigWith(context.Background(), raw, r.Value)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err %v, want %q", tc.headers, err, tc.wantErr)
			}
			continue
		}
		if err != nil || cfg.Timeout != 5*time.Second {
			t.Fatalf("%v: %+v %v", tc.headers, cfg, err)
		}
		for h, v := range tc.want {
			if cfg.Headers[h] != v {
				t.Errorf("header %s = %q, want %q", h, cfg.Headers[h], v)
			}
		}
	}
}

func TestConfigFromEnvSecrets(t *testing.T) {
	tests := []struct {
		vars    map[string]string
		prefix  string
		ttl     time.Duration
		ssm     string
		wantErr string
	}{
		{vars: nil, prefix: "", ttl: secrets.DefaultTTL},
		{vars: map[string]string{"TOOL_RAG_SECRETS_PREFIX": " /toolrag/prod/ ", "TOOL_RAG_SECRETS_TTL": "60", "AWS_ENDPOINT_URL_SSM": "http://127.0.0.1:4583"},
			prefix: "/toolrag/prod/", ttl: time.Minute, ssm: "http://127.0.0.1:4583"},
		{vars: map[string]string{"TOOL_RAG_SSM_ENDPOINT": "http://127.0.0.1:1", "AWS_ENDPOINT_URL": "http://127.0.0.1:2"}, ttl: secrets.DefaultTTL, ssm: "http://127.0.0.1:1"},
		{vars: map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:2"}, ttl: secrets.DefaultTTL, ssm: "http://127.0.0.1:2"},
		{vars: map[string]string{"TOOL_RAG_SECRETS_TTL": "soon"}, wantErr: "TOOL_RAG_SECRETS_TTL"},
		{vars: map[string]string{"TOOL_RAG_SSM_ENDPOINT": "localhost"}, wantErr: "SSM endpoint"},
	}
	for _, tc := range tests {
		vars := map[string]string{"TOOL_RAG_INDEX_BUCKET": "b"}
		for k, v := range tc.vars {
			vars[k] = v
		}
		c, err := ConfigFromEnv(func(k string) string { return vars[k] })
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err %v, want %q", tc.vars, err, tc.wantErr)
			}
			continue
		}
		if err != nil || c.SecretsPrefix != tc.prefix || c.SecretsTTL != tc.ttl || c.SSMEndpoint != tc.ssm {
			t.Errorf("%v: prefix %q ttl %v ssm %q, %v", tc.vars, c.SecretsPrefix, c.SecretsTTL, c.SSMEndpoint, err)
		}
	}
}
