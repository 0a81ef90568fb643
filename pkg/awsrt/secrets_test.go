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
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/aws/awsclient"
	"github.com/toolrag/mcp-gateway/pkg/aws/secrets"
	"github.com/toolrag/mcp-gateway/pkg/aws/secrets/smtest"
	"github.com/toolrag/mcp-gateway/pkg/aws/secrets/ssmtest"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// The variable the registry headers reference; tests set it to "" in the
// environment so that the SSM parameter is what counts.
const tokenVar = "TOOLRAG_UPSTREAM_AWSRT_TEST_UPSTREAM_TOKEN"

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

// secretsCase is one run of a registry entry whose Authorization header
// is "Bearer ${tokenVar}" through the sync, gateway and health functions.
type secretsCase struct {
	set       func(*Config) // points the functions at the store (prefix, store, client)
	calls     func() int    // calls the store received
	wantStale []string      // substrings of the sync's stale reason (and the health function's down reason: the first); nil = synced
	wantCalls int           // store calls by the sync, gateway (success only) and health functions
}

// runSecretsCase registers the entry, fronted by a proxy that lets only
// "Bearer "+token through to the echo upstream, and checks that the
// secret reaches it from the store (or that the server is kept as
// misconfigured and never called without its credentials), that the store
// is called wantCalls times, and that token never appears in the logs.
func runSecretsCase(t *testing.T, echo, token string, tc secretsCase) {
	t.Helper()
	e := newTestEnv(t)
	proxy := newAuthProxy(t, echo, "Bearer "+token)
	doc, err := config.EncodeServerConfig(upstream.ServerConfig{
		Transport: upstream.TransportStreamableHTTP, URL: proxy.URL,
		Headers: map[string]string{"Authorization": "Bearer ${" + tokenVar + "}"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.registry.PutServer(context.Background(), "echo", doc); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cfg := e.config(t)
	tc.set(&cfg)
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
		g := e.gateway(t, tc.set)
		if tools, err := g.Upstreams.ListTools(context.Background(), "echo"); err != nil || len(tools) == 0 {
			t.Fatalf("gateway → upstream: %d tools, %v", len(tools), err)
		}
		hc := e.config(t)
		tc.set(&hc)
		hr, err := probeHealth(context.Background(), hc)
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
		tc.set(&hc)
		hr, err := probeHealth(context.Background(), hc)
		if err != nil || !strings.Contains(hr.Down["echo"], tc.wantStale[0]) {
			t.Fatalf("health: %+v %v; want echo down with %q", hr, err, tc.wantStale[0])
		}
		if n := len(proxy.headers()); n != 0 {
			t.Fatalf("the upstream was called %d times without its credentials", n)
		}
	}
	if n := tc.calls(); n != tc.wantCalls {
		t.Fatalf("%d calls to the secrets store, want %d", n, tc.wantCalls)
	}
	if strings.Contains(logs.String(), token) {
		t.Fatalf("logs contain the secret value:\n%s", logs.String())
	}
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
		wantStale []string
		ssmCalls  int
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
			fake := ssmtest.New(t, tc.params)
			if tc.deny {
				fake.Fail(400, "AccessDeniedException", "User: arn:aws:sts::123456789012:assumed-role/sync/fn is not authorized to perform: ssm:GetParametersByPath on resource: arn:aws:ssm:us-east-1:123456789012:parameter"+prefix)
			}
			runSecretsCase(t, echo, token, secretsCase{
				set:       func(c *Config) { c.SecretsPrefix, c.SSM = tc.prefix, fake.Client },
				calls:     func() int { return len(fake.Requests()) },
				wantStale: tc.wantStale, wantCalls: tc.ssmCalls,
			})
		})
	}
}

// The same with TOOL_RAG_SECRETS_STORE=secretsmanager: the header secret
// comes from the Secrets Manager secret <prefix>VAR (real SDK client, fake
// speaking Secrets Manager's wire protocol), one GetSecretValue per
// function instance.
func TestRegistrySecretsFromSecretsManager(t *testing.T) {
	t.Setenv(tokenVar, "")
	const prefix = "/toolrag/test/"
	const token = "tok-from-sm-91c2"
	echo := startEcho(t)
	tests := []struct {
		name      string
		store     string
		prefix    string
		secrets   map[string]string
		deny      bool
		wantStale []string
		smCalls   int
	}{
		{name: "value from Secrets Manager", secrets: map[string]string{prefix + tokenVar: token, prefix + "OTHER": "x"},
			smCalls: 3}, // sync, gateway, health: one GetSecretValue each
		{name: "access denied", secrets: map[string]string{prefix + tokenVar: token}, deny: true, smCalls: 2,
			wantStale: []string{"header Authorization needs secret " + tokenVar + ": reading Secrets Manager secret " + prefix + tokenVar + ": ", "AccessDeniedException", "not authorized to perform: secretsmanager:GetSecretValue"}},
		{name: "secret missing", secrets: map[string]string{prefix + "OTHER": "x"}, smCalls: 2,
			wantStale: []string{"header Authorization needs secret " + tokenVar + ": neither the environment variable " + tokenVar + " nor the Secrets Manager secret " + prefix + tokenVar + " exists"}},
		{name: "unknown store", store: "vault", secrets: map[string]string{prefix + tokenVar: token}, smCalls: 0,
			wantStale: []string{"needs secret " + tokenVar, "TOOL_RAG_SECRETS_STORE: secrets store ", "vault", "is not ssm or secretsmanager"}},
		{name: "prefix that is not a Secrets Manager name prefix", prefix: "/toolrag/test", secrets: map[string]string{prefix + tokenVar: token}, smCalls: 0,
			wantStale: []string{"needs secret " + tokenVar, "TOOL_RAG_SECRETS_PREFIX", "is not a Secrets Manager name prefix"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := smtest.New(t, tc.secrets)
			if tc.deny {
				fake.Fail(400, "AccessDeniedException", "User: arn:aws:sts::123456789012:assumed-role/sync/fn is not authorized to perform: secretsmanager:GetSecretValue on resource: "+prefix+tokenVar+" because no identity-based policy allows the secretsmanager:GetSecretValue action")
			}
			store, pfx := tc.store, tc.prefix
			if store == "" {
				store = "secretsmanager"
			}
			if pfx == "" {
				pfx = prefix
			}
			runSecretsCase(t, echo, token, secretsCase{
				set: func(c *Config) {
					c.SecretsPrefix, c.SecretsStore, c.SecretsManager = pfx, store, fake.Client
					c.SSM = ssmtest.NewClient("http://127.0.0.1:1") // never called
				},
				calls:     func() int { return len(fake.Requests()) },
				wantStale: tc.wantStale, wantCalls: tc.smCalls,
			})
			for _, rq := range fake.Requests() {
				if want := `{"SecretId":"` + prefix + tokenVar + `"}`; rq.Target != "secretsmanager.GetSecretValue" || string(rq.Body) != want {
					t.Errorf("request %s %s, want secretsmanager.GetSecretValue %s", rq.Target, rq.Body, want)
				}
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

// DecodeServerConfig with the resolver: the environment wins, every
// header is resolved, and a failure names the header and the variable.
func TestDecodeServerConfigSecrets(t *testing.T) {
	t.Setenv("TOOLRAG_UPSTREAM_AWSRT_TEST_ENV_ONLY", "from-env")
	t.Setenv("TOOLRAG_UPSTREAM_AWSRT_TEST_BOTH", "env-wins")
	const prefix = "/p/"
	fake := ssmtest.New(t, map[string]string{prefix + "TOOLRAG_UPSTREAM_AWSRT_TEST_BOTH": "ssm-loses", prefix + "TOOLRAG_UPSTREAM_AWSRT_TEST_SSM_ONLY": "from-ssm"})
	r, err := secrets.New(secrets.Config{Prefix: prefix, Client: fake.Client, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		headers map[string]string
		want    map[string]string
		wantErr string
	}{
		{map[string]string{"A": "${TOOLRAG_UPSTREAM_AWSRT_TEST_ENV_ONLY}", "B": "x ${TOOLRAG_UPSTREAM_AWSRT_TEST_BOTH} ${TOOLRAG_UPSTREAM_AWSRT_TEST_SSM_ONLY}"},
			map[string]string{"A": "from-env", "B": "x env-wins from-ssm"}, ""},
		{map[string]string{"X-Key": "${TOOLRAG_UPSTREAM_AWSRT_TEST_NONE}"}, nil,
			"header X-Key needs secret TOOLRAG_UPSTREAM_AWSRT_TEST_NONE: neither the environment variable TOOLRAG_UPSTREAM_AWSRT_TEST_NONE nor the SSM parameter /p/TOOLRAG_UPSTREAM_AWSRT_TEST_NONE is set"},
		{map[string]string{"X-Key": "${BAD-NAME}"}, nil, `header X-Key needs secret BAD-NAME: "BAD-NAME" is not a valid secret name`},
	}
	for _, tc := range tests {
		raw, _ := json.Marshal(map[string]any{"transport": "sse", "url": "http://h/sse", "headers": tc.headers, "timeout": "5s"})
		cfg, err := config.DecodeServerConfig(context.Background(), raw, r.Value)
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
		store   string
		ttl     time.Duration
		ssm     string
		sm      string
		wantErr string
	}{
		{vars: nil, prefix: "", ttl: secrets.DefaultTTL},
		{vars: map[string]string{"TOOL_RAG_SECRETS_PREFIX": " /toolrag/prod/ ", "TOOL_RAG_SECRETS_TTL": "60", "AWS_ENDPOINT_URL_SSM": "http://127.0.0.1:4583"},
			prefix: "/toolrag/prod/", ttl: time.Minute, ssm: "http://127.0.0.1:4583"},
		{vars: map[string]string{"TOOL_RAG_SSM_ENDPOINT": "http://127.0.0.1:1", "AWS_ENDPOINT_URL": "http://127.0.0.1:2"}, ttl: secrets.DefaultTTL, ssm: "http://127.0.0.1:1", sm: "http://127.0.0.1:2"},
		{vars: map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:2"}, ttl: secrets.DefaultTTL, ssm: "http://127.0.0.1:2", sm: "http://127.0.0.1:2"},
		{vars: map[string]string{"TOOL_RAG_SECRETS_STORE": " SecretsManager ", "TOOL_RAG_SECRETS_PREFIX": "/p/", "AWS_ENDPOINT_URL_SECRETS_MANAGER": "http://127.0.0.1:3", "AWS_ENDPOINT_URL": "http://127.0.0.1:2"},
			prefix: "/p/", store: "secretsmanager", ttl: secrets.DefaultTTL, ssm: "http://127.0.0.1:2", sm: "http://127.0.0.1:3"},
		{vars: map[string]string{"TOOL_RAG_SECRETSMANAGER_ENDPOINT": "http://127.0.0.1:4", "AWS_ENDPOINT_URL_SECRETS_MANAGER": "http://127.0.0.1:3"}, ttl: secrets.DefaultTTL, sm: "http://127.0.0.1:4"},
		// An unknown store is not a startup failure: secretSource logs it
		// and headers that need the store report it.
		{vars: map[string]string{"TOOL_RAG_SECRETS_STORE": "vault"}, store: "vault", ttl: secrets.DefaultTTL},
		{vars: map[string]string{"TOOL_RAG_SECRETS_TTL": "soon"}, wantErr: "TOOL_RAG_SECRETS_TTL"},
		{vars: map[string]string{"TOOL_RAG_SSM_ENDPOINT": "localhost"}, wantErr: "SSM endpoint"},
		{vars: map[string]string{"TOOL_RAG_SECRETSMANAGER_ENDPOINT": "localhost:4566"}, wantErr: `Secrets Manager endpoint "localhost:4566" is not a URL`},
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
		if err != nil || c.SecretsPrefix != tc.prefix || c.SecretsStore != tc.store || c.SecretsTTL != tc.ttl || c.SSMEndpoint != tc.ssm || c.SecretsManagerEndpoint != tc.sm {
			t.Errorf("%v: prefix %q store %q ttl %v ssm %q sm %q, %v", tc.vars, c.SecretsPrefix, c.SecretsStore, c.SecretsTTL, c.SSMEndpoint, c.SecretsManagerEndpoint, err)
		}
	}
}

// An SSM or Secrets Manager endpoint that accepts the request and never
// answers fails the secret lookup after the clients' operation timeout,
// with an error naming the store, instead of holding the request (and the
// invocation) until the store gives up.
func TestSecretsStoreThatDoesNotAnswer(t *testing.T) {
	t.Setenv(tokenVar, "")
	const hang = 20 * time.Second
	for _, store := range []string{secrets.StoreSSM, secrets.StoreSecretsManager} {
		t.Run(store, func(t *testing.T) {
			var calls atomic.Int64
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				select {
				case <-r.Context().Done():
				case <-release:
				case <-time.After(hang):
				}
			}))
			defer srv.Close()
			defer close(release)
			c := Config{SecretsPrefix: "/toolrag/test/", SecretsStore: store, Logger: slog.New(slog.DiscardHandler),
				secretsTimeouts: awsclient.Timeouts{Attempt: 700 * time.Millisecond, Operation: time.Second}}
			if store == secrets.StoreSSM {
				c.SSMEndpoint = srv.URL
			} else {
				c.SecretsManagerEndpoint = srv.URL
			}
			if err := c.secretSource(context.Background()); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err := c.secret(context.Background(), tokenVar)
			took := time.Since(start)
			name := map[string]string{secrets.StoreSSM: "SSM Parameter Store", secrets.StoreSecretsManager: "Secrets Manager"}[store]
			if err == nil || !strings.Contains(err.Error(), name+" did not answer within 1s") {
				t.Fatalf("lookup error %v, want %q did not answer within 1s", err, name)
			}
			if took >= hang/2 {
				t.Fatalf("the lookup took %s: not bounded by the operation timeout", took)
			}
			if calls.Load() == 0 {
				t.Fatal("the store was never called")
			}
		})
	}
}

// With the SSM store, a Fargate stdio server's hop credential
// (${TOOLRAG_HOP_*}, created by the stacks in Secrets Manager) is read
// from Secrets Manager under the same prefix, and every other name from
// SSM.
func TestHopSecretFromSecretsManager(t *testing.T) {
	const prefix = "/toolrag/test/"
	sm := smtest.New(t, map[string]string{prefix + "TOOLRAG_HOP_LOCAL_ECHO": "hop-value-from-sm"})
	ssm := ssmtest.New(t, map[string]string{prefix + "OTHER_TOKEN": "from-ssm", prefix + "TOOLRAG_HOP_LOCAL_ECHO": "ssm-must-not-win"})
	c := Config{SecretsPrefix: prefix, SecretsStore: secrets.StoreSSM, SSM: ssm.Client, SecretsManager: sm.Client, Logger: slog.New(slog.DiscardHandler)}
	if err := c.secretSource(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"TOOLRAG_HOP_LOCAL_ECHO": "hop-value-from-sm", "OTHER_TOKEN": "from-ssm"} {
		got, err := c.secret(context.Background(), name)
		if err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	if n := len(sm.Requests()); n != 1 {
		t.Errorf("%d Secrets Manager calls, want 1 (the hop credential)", n)
	}
}
