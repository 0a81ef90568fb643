package secrets

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/aws/secrets/smtest"
	"github.com/toolrag/mcp-gateway/pkg/aws/secrets/ssmtest"
)

// newSMFixture is a Resolver over a fake Secrets Manager holding secrets
// (full names → SecretString), with the fixture's clock, environment and
// logs.
func newSMFixture(t *testing.T, pfx string, secrets map[string]string, env map[string]string) *fixture {
	t.Helper()
	f := &fixture{sm: smtest.New(t, secrets), now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), env: env}
	cfg := f.config()
	cfg.Prefix, cfg.Store, cfg.SecretsManager = pfx, StoreSecretsManager, f.sm.Client
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.r = r
	return f
}

func TestSecretsManagerLookup(t *testing.T) {
	const jsonValue = `{"token":"t-1","user":"bot"}`
	tests := []struct {
		name     string
		prefix   string // "" = prefix
		secrets  map[string]string
		binary   string // a secret stored as SecretBinary
		env      map[string]string
		fail     string // AccessDeniedException message
		lookup   string
		want     string
		wantErr  []string // substrings of the error
		notFound bool
		requests []string // SecretId of each GetSecretValue call
	}{
		{name: "environment wins over Secrets Manager", secrets: map[string]string{prefix + "TOOLRAG_UPSTREAM_TOKEN": "from-sm"},
			env: map[string]string{"TOOLRAG_UPSTREAM_TOKEN": "from-env"}, lookup: "TOOLRAG_UPSTREAM_TOKEN", want: "from-env"},
		{name: "an unlisted name is read from Secrets Manager only", secrets: map[string]string{prefix + "TOKEN": "from-sm"},
			env: map[string]string{"TOKEN": "from-env"}, lookup: "TOKEN", want: "from-sm", requests: []string{prefix + "TOKEN"}},
		{name: "secret value when not in the environment", secrets: map[string]string{prefix + "TOKEN": "from-sm", prefix + "OTHER": "x"},
			lookup: "TOKEN", want: "from-sm", requests: []string{prefix + "TOKEN"}},
		{name: "empty environment variable falls through", secrets: map[string]string{prefix + "TOKEN": "from-sm"},
			env: map[string]string{"TOKEN": ""}, lookup: "TOKEN", want: "from-sm", requests: []string{prefix + "TOKEN"}},
		{name: "a JSON SecretString is the value as is", secrets: map[string]string{prefix + "CREDS": jsonValue},
			lookup: "CREDS", want: jsonValue, requests: []string{prefix + "CREDS"}},
		{name: "prefix without the leading slash", prefix: "toolrag/prod/", secrets: map[string]string{"toolrag/prod/TOKEN": "v", prefix + "TOKEN": "other"},
			lookup: "TOKEN", want: "v", requests: []string{"toolrag/prod/TOKEN"}},
		{name: "missing", secrets: map[string]string{prefix + "OTHER": "x"}, lookup: "TOOLRAG_UPSTREAM_GITHUB_TOKEN", notFound: true,
			wantErr:  []string{"neither the environment variable TOOLRAG_UPSTREAM_GITHUB_TOKEN nor the Secrets Manager secret " + prefix + "TOOLRAG_UPSTREAM_GITHUB_TOKEN exists"},
			requests: []string{prefix + "TOOLRAG_UPSTREAM_GITHUB_TOKEN"}},
		{name: "missing, not read from the environment", secrets: map[string]string{prefix + "OTHER": "x"}, lookup: "GITHUB_TOKEN", notFound: true,
			wantErr:  []string{"the Secrets Manager secret " + prefix + "GITHUB_TOKEN does not exist (the environment variable GITHUB_TOKEN is not read"},
			requests: []string{prefix + "GITHUB_TOKEN"}},
		{name: "access denied", secrets: map[string]string{prefix + "TOKEN": "from-sm"}, lookup: "TOKEN",
			fail:     "User: arn:aws:sts::1:assumed-role/r is not authorized to perform: secretsmanager:GetSecretValue on resource: " + prefix + "TOKEN",
			wantErr:  []string{"reading Secrets Manager secret " + prefix + "TOKEN: ", "AccessDeniedException", "is not authorized to perform: secretsmanager:GetSecretValue"},
			requests: []string{prefix + "TOKEN"}},
		{name: "binary secret", binary: prefix + "BLOB", lookup: "BLOB",
			wantErr:  []string{"the Secrets Manager secret " + prefix + "BLOB holds binary data (SecretBinary), not a string"},
			requests: []string{prefix + "BLOB"}},
		{name: "invalid name", lookup: "MY-KEY", wantErr: []string{`"MY-KEY" is not a valid secret name`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pfx := tc.prefix
			if pfx == "" {
				pfx = prefix
			}
			f := newSMFixture(t, pfx, tc.secrets, tc.env)
			if tc.binary != "" {
				f.sm.Put(tc.binary, smtest.Secret{Binary: []byte{0, 1, 2}})
			}
			if tc.fail != "" {
				f.sm.Fail(400, "AccessDeniedException", tc.fail)
			}
			got, err := f.r.Value(context.Background(), tc.lookup)
			checkValue(t, got, err, tc.want, tc.wantErr, tc.notFound)
			checkSMRequests(t, f.sm.Requests(), tc.requests)
			// A second lookup within the TTL (or, after a failure, within
			// the retry delay) costs nothing more and answers the same.
			got2, err2 := f.r.Value(context.Background(), tc.lookup)
			if got2 != got || (err2 == nil) != (err == nil) {
				t.Fatalf("second lookup: %q %v; first %q %v", got2, err2, got, err)
			}
			checkSMRequests(t, f.sm.Requests(), tc.requests)
		})
	}
}

// checkSMRequests asserts what the SDK sent: awsJson1_1 to
// secretsmanager.GetSecretValue with only SecretId, one call per id.
func checkSMRequests(t *testing.T, reqs []smtest.Request, ids []string) {
	t.Helper()
	if len(reqs) != len(ids) {
		t.Fatalf("%d GetSecretValue calls, want %d (%v)", len(reqs), len(ids), ids)
	}
	for i, rq := range reqs {
		if rq.Target != "secretsmanager.GetSecretValue" || rq.ContentType != "application/x-amz-json-1.1" {
			t.Errorf("target %q, content type %q", rq.Target, rq.ContentType)
		}
		if want := fmt.Sprintf(`{"SecretId":%q}`, ids[i]); string(rq.Body) != want {
			t.Errorf("request body %s, want %s", rq.Body, want)
		}
	}
}

// The retry delay after a failed read holds back only the name that
// failed: other names are read meanwhile.
func TestSecretsManagerRetryDelayIsPerName(t *testing.T) {
	f := newSMFixture(t, prefix, map[string]string{prefix + "TOKEN": "v1", prefix + "OTHER": "o"}, nil)
	f.sm.Fail(400, "AccessDeniedException", "denied")
	ctx := context.Background()
	if _, err := f.r.Value(ctx, "TOKEN"); err == nil || !strings.Contains(err.Error(), "denied") {
		t.Fatalf("err %v", err)
	}
	f.sm.Fail(0, "", "")
	if v, err := f.r.Value(ctx, "OTHER"); err != nil || v != "o" {
		t.Fatalf("another name during TOKEN's retry delay: %q %v", v, err)
	}
	if _, err := f.r.Value(ctx, "TOKEN"); err == nil {
		t.Fatal("TOKEN read again within its retry delay")
	}
	f.advance(MaxRetryDelay)
	if v, err := f.r.Value(ctx, "TOKEN"); err != nil || v != "v1" {
		t.Fatalf("after the retry delay: %q %v", v, err)
	}
	checkSMRequests(t, f.sm.Requests(), []string{prefix + "TOKEN", prefix + "OTHER", prefix + "TOKEN"})
}

// A lookup waiting for another's call gives up with its own context.
func TestSecretsManagerWaiterCancelled(t *testing.T) {
	f := newSMFixture(t, prefix, map[string]string{prefix + "A": "a"}, nil)
	release := f.sm.Hold()
	done := make(chan error, 1)
	go func() { _, err := f.r.Value(context.Background(), "A"); done <- err }()
	for len(f.sm.Requests()) < 1 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.r.Value(ctx, "A"); !errors.Is(err, context.Canceled) {
		t.Fatalf("waiter: %v, want context.Canceled", err)
	}
	release()
	if err := <-done; err != nil {
		t.Fatalf("first lookup: %v", err)
	}
	if n := len(f.sm.Requests()); n != 1 {
		t.Fatalf("%d calls, want 1", n)
	}
}

func TestNewStore(t *testing.T) {
	ssmc, smc := ssmtest.NewClient("http://127.0.0.1:1"), smtest.NewClient("http://127.0.0.1:1")
	tests := []struct {
		store   string
		prefix  string
		ssm     SSMAPI
		sm      SecretsManagerAPI
		want    string // Store() when wantErr is ""
		wantErr string
	}{
		{"", "/p/", ssmc, nil, StoreSSM, ""},
		{"ssm", "/p/", ssmc, nil, StoreSSM, ""},
		{"secretsmanager", "/toolrag/prod/", nil, smc, StoreSecretsManager, ""},
		{"secretsmanager", "toolrag/prod/", nil, smc, StoreSecretsManager, ""},
		{"secretsmanager", "/", nil, smc, StoreSecretsManager, ""},
		{"secretsmanager", "team+a@x=1/", nil, smc, StoreSecretsManager, ""},
		{"ssm", "toolrag/prod/", ssmc, nil, "", "not an SSM parameter path"},
		{"secretsmanager", "/toolrag/prod", nil, smc, "", `not a Secrets Manager name prefix like /toolrag/prod/ (it must end with "/"`},
		{"secretsmanager", "", nil, smc, "", "not a Secrets Manager name prefix"},
		{"secretsmanager", "/a//b/", nil, smc, "", "not a Secrets Manager name prefix"},
		{"secretsmanager", "/a b/", nil, smc, "", "not a Secrets Manager name prefix"},
		{"secretsmanager", "/p/", ssmc, nil, "", "no Secrets Manager client"},
		{"ssm", "/p/", nil, smc, "", "no SSM client"},
		{"vault", "/p/", ssmc, smc, "", `secrets store "vault" is not ssm or secretsmanager`},
	}
	for _, tc := range tests {
		r, err := New(Config{Store: tc.store, Prefix: tc.prefix, Client: tc.ssm, SecretsManager: tc.sm})
		if tc.wantErr == "" {
			if err != nil || r.store != tc.want || r.ParameterName("X") != tc.prefix+"X" {
				t.Errorf("%s %q: %v", tc.store, tc.prefix, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s %q: err %v, want %q", tc.store, tc.prefix, err, tc.wantErr)
		}
	}
}
