package secrets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/aws/secrets/smtest"
	"github.com/toolrag/mcp-gateway/pkg/aws/secrets/ssmtest"
)

const prefix = "/toolrag/prod/"

// fixture is a Resolver over a fake SSM, with a settable clock, a fake
// environment and captured logs.
type fixture struct {
	ssm *ssmtest.Server
	sm  *smtest.Server // set by newSMFixture instead of ssm
	r   *Resolver
	now time.Time
	env map[string]string
	mu  sync.Mutex
	log bytes.Buffer
}

func newFixture(t *testing.T, params map[string]string, env map[string]string) *fixture {
	t.Helper()
	f := &fixture{ssm: ssmtest.New(t, params), now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), env: env}
	cfg := f.config()
	cfg.Client = f.ssm.Client
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.r = r
	return f
}

// config is a Config with the fixture's TTL (a minute), logger,
// environment and clock, and no store.
func (f *fixture) config() Config {
	return Config{
		Prefix: prefix, TTL: time.Minute,
		Logger:    slog.New(slog.NewTextHandler(lockedWriter{f}, &slog.HandlerOptions{Level: slog.LevelDebug})),
		LookupEnv: func(k string) (string, bool) { v, ok := f.env[k]; return v, ok },
		Now:       func() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now },
	}
}

type lockedWriter struct{ f *fixture }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.f.mu.Lock()
	defer w.f.mu.Unlock()
	return w.f.log.Write(p)
}

func (f *fixture) advance(d time.Duration) { f.mu.Lock(); f.now = f.now.Add(d); f.mu.Unlock() }
func (f *fixture) logs() string            { f.mu.Lock(); defer f.mu.Unlock(); return f.log.String() }

// store is one secrets store behind a fixture, for the behaviours both
// stores share: the TTL, the retry delay after a failure, cancelled and
// concurrent reads.
type store struct {
	name string // StoreSSM or StoreSecretsManager
	// newFixture is a fixture whose store holds values (full names).
	newFixture func(t *testing.T, values map[string]string) *fixture
	refreshLog string // what a failed refresh logs
	internal   string // the store's error type for a failure of its own
}

var stores = []store{
	{name: StoreSSM, newFixture: func(t *testing.T, values map[string]string) *fixture { return newFixture(t, values, nil) },
		refreshLog: "could not refresh secrets from SSM", internal: "InternalServerError"},
	{name: StoreSecretsManager, newFixture: func(t *testing.T, values map[string]string) *fixture { return newSMFixture(t, prefix, values, nil) },
		refreshLog: "could not refresh a secret from Secrets Manager", internal: "InternalServiceError"},
}

// put stores a value (an SSM SecureString or a Secrets Manager
// SecretString) under its full name.
func (f *fixture) put(name, value string) {
	if f.sm != nil {
		f.sm.Put(name, smtest.Secret{String: value})
		return
	}
	f.ssm.Put(name, ssmtest.Parameter{Value: value, Secure: true})
}

func (f *fixture) delete(name string) {
	if f.sm != nil {
		f.sm.Delete(name)
		return
	}
	f.ssm.Delete(name)
}

// fail makes every call to the store fail; an empty typ ends it.
func (f *fixture) fail(status int, typ, message string) {
	if f.sm != nil {
		f.sm.Fail(status, typ, message)
		return
	}
	f.ssm.Fail(status, typ, message)
}

// hold makes calls to the store wait until release is called.
func (f *fixture) hold() (release func()) {
	if f.sm != nil {
		return f.sm.Hold()
	}
	return f.ssm.Hold()
}

// requested is what each call to the store so far asked for: the path of
// a GetParametersByPath, the SecretId of a GetSecretValue.
func (f *fixture) requested() []string {
	var got []string
	if f.sm != nil {
		for _, rq := range f.sm.Requests() {
			got = append(got, rq.Input.SecretId)
		}
		return got
	}
	for _, rq := range f.ssm.Requests() {
		got = append(got, rq.Input.Path)
	}
	return got
}

// eachStore runs test for each store.
func eachStore(t *testing.T, test func(t *testing.T, s store)) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) { test(t, s) })
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		name     string
		params   map[string]string
		env      map[string]string
		pageSize int
		fail     string // AccessDeniedException message
		lookup   string
		want     string
		wantErr  []string // substrings of the error
		notFound bool
		requests int // GetParametersByPath calls
	}{
		{name: "environment wins over SSM", params: map[string]string{prefix + "TOOLRAG_UPSTREAM_TOKEN": "from-ssm"},
			env: map[string]string{"TOOLRAG_UPSTREAM_TOKEN": "from-env"}, lookup: "TOOLRAG_UPSTREAM_TOKEN", want: "from-env", requests: 0},
		{name: "a name listed in TOOL_RAG_UPSTREAM_ENV is read from the environment", params: map[string]string{prefix + "TOKEN": "from-ssm"},
			env: map[string]string{"TOKEN": "from-env", AllowEnvSetting: "OTHER, TOKEN"}, lookup: "TOKEN", want: "from-env", requests: 0},
		{name: "any other name is read from SSM only", params: map[string]string{prefix + "TOKEN": "from-ssm"},
			env: map[string]string{"TOKEN": "from-env"}, lookup: "TOKEN", want: "from-ssm", requests: 1},
		{name: "a reserved name is never read", params: map[string]string{prefix + "AWS_SECRET_ACCESS_KEY": "from-ssm"},
			env: map[string]string{"AWS_SECRET_ACCESS_KEY": "from-env", AllowEnvSetting: "AWS_SECRET_ACCESS_KEY"}, lookup: "AWS_SECRET_ACCESS_KEY",
			wantErr: []string{"AWS_SECRET_ACCESS_KEY is reserved for the gateway and its platform (AWS_*)"}, requests: 0},
		{name: "SSM value when not in the environment", params: map[string]string{prefix + "TOKEN": "from-ssm"},
			lookup: "TOKEN", want: "from-ssm", requests: 1},
		{name: "empty environment variable falls through to SSM", params: map[string]string{prefix + "TOOLRAG_UPSTREAM_TOKEN": "from-ssm"},
			env: map[string]string{"TOOLRAG_UPSTREAM_TOKEN": ""}, lookup: "TOOLRAG_UPSTREAM_TOKEN", want: "from-ssm", requests: 1},
		{name: "two pages", pageSize: 2, params: map[string]string{prefix + "A": "a", prefix + "B": "b", prefix + "C": "c-value"},
			lookup: "C", want: "c-value", requests: 2},
		{name: "SSM's page size: 11 parameters are two pages", params: elevenParams(),
			lookup: "P10", want: "v10", requests: 2},
		{name: "missing", params: map[string]string{prefix + "OTHER": "x"}, lookup: "GITHUB_TOKEN",
			notFound: true, wantErr: []string{"GITHUB_TOKEN", prefix + "GITHUB_TOKEN"}, requests: 1},
		{name: "nested parameters are not read (Recursive false)", params: map[string]string{prefix + "sub/TOKEN": "x"},
			lookup: "TOKEN", notFound: true, wantErr: []string{prefix + "TOKEN"}, requests: 1},
		{name: "access denied", params: map[string]string{prefix + "TOKEN": "from-ssm"},
			fail: "User: arn:aws:sts::1:assumed-role/r is not authorized to perform: ssm:GetParametersByPath", lookup: "TOKEN",
			wantErr: []string{"reading SSM parameters under " + prefix, "AccessDeniedException", "is not authorized to perform"}, requests: 1},
		{name: "invalid name", lookup: "MY-KEY", wantErr: []string{`"MY-KEY" is not a valid secret name`}, requests: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.params, tc.env)
			if tc.pageSize > 0 {
				f.ssm.SetPageSize(tc.pageSize)
			}
			if tc.fail != "" {
				f.ssm.Fail(400, "AccessDeniedException", tc.fail)
			}
			got, err := f.r.Value(context.Background(), tc.lookup)
			checkValue(t, got, err, tc.want, tc.wantErr, tc.notFound)
			reqs := f.ssm.Requests()
			if len(reqs) != tc.requests {
				t.Fatalf("%d GetParametersByPath calls, want %d", len(reqs), tc.requests)
			}
			for i, rq := range reqs {
				checkRequest(t, rq, i > 0)
			}
			// A second lookup within the TTL costs nothing more.
			_, _, _ = f.r.Lookup(context.Background(), tc.lookup)
			if n := len(f.ssm.Requests()); n != tc.requests {
				t.Fatalf("second lookup: %d calls, want %d", n, tc.requests)
			}
		})
	}
}

func elevenParams() map[string]string {
	m := map[string]string{}
	for i := range 11 {
		m[fmt.Sprintf("%sP%02d", prefix, i)] = fmt.Sprintf("v%02d", i)
	}
	return m
}

// checkRequest asserts what the SDK sent: awsJson1_1 to
// AmazonSSM.GetParametersByPath with the prefix as the path, decryption on,
// no recursion, and the NextToken of the previous page after the first.
func checkRequest(t *testing.T, rq ssmtest.Request, wantToken bool) {
	t.Helper()
	if rq.Target != "AmazonSSM.GetParametersByPath" || rq.ContentType != "application/x-amz-json-1.1" {
		t.Errorf("target %q, content type %q", rq.Target, rq.ContentType)
	}
	if rq.Fields["Path"] != prefix || rq.Fields["WithDecryption"] != true || rq.Fields["Recursive"] != false {
		t.Errorf("request body %s", rq.Body)
	}
	if _, has := rq.Fields["NextToken"]; has != wantToken {
		t.Errorf("request body %s: NextToken present %v, want %v", rq.Body, has, wantToken)
	}
	for k := range rq.Fields {
		switch k {
		case "Path", "WithDecryption", "Recursive", "NextToken":
		default:
			t.Errorf("unexpected member %s in %s", k, rq.Body)
		}
	}
}

// SecureString values come back in clear only because the resolver asks
// for decryption; a plain String parameter works too.
func TestSecureAndPlain(t *testing.T) {
	f := newFixture(t, nil, nil)
	f.ssm.Put(prefix+"SECURE", ssmtest.Parameter{Value: "clear-secure", Secure: true})
	f.ssm.Put(prefix+"PLAIN", ssmtest.Parameter{Value: "clear-plain"})
	for name, want := range map[string]string{"SECURE": "clear-secure", "PLAIN": "clear-plain"} {
		if got, err := f.r.Value(context.Background(), name); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", name, got, err, want)
		}
	}
}

// After the TTL a value is read again; a failed refresh keeps the last
// good value (and is logged) and is not retried on every lookup; a value
// deleted since is missing after the next good read.
func TestRefresh(t *testing.T) {
	eachStore(t, func(t *testing.T, s store) {
		f := s.newFixture(t, map[string]string{prefix + "TOKEN": "v1"})
		ctx := context.Background()
		get := func(want string, wantCalls int) {
			t.Helper()
			got, err := f.r.Value(ctx, "TOKEN")
			if err != nil || got != want {
				t.Fatalf("got %q %v, want %q", got, err, want)
			}
			if n := len(f.requested()); n != wantCalls {
				t.Fatalf("%d calls, want %d", n, wantCalls)
			}
		}
		get("v1", 1)
		f.put(prefix+"TOKEN", "v2")
		f.advance(59 * time.Second)
		get("v1", 1) // within the TTL
		f.advance(time.Second)
		get("v2", 2) // TTL reached: read again

		f.put(prefix+"TOKEN", "v3")
		f.fail(500, s.internal, "try later")
		f.advance(time.Minute)
		get("v2", 3) // refresh failed: last good value
		if !strings.Contains(f.logs(), s.refreshLog) || !strings.Contains(f.logs(), s.internal) {
			t.Fatalf("failed refresh not logged:\n%s", f.logs())
		}
		f.advance(10 * time.Second)
		get("v2", 3) // within the retry delay: no call
		f.fail(0, "", "")
		f.advance(20 * time.Second)
		get("v3", 4) // retry delay over: read again

		f.delete(prefix + "TOKEN")
		f.advance(time.Minute)
		var nf *NotFoundError
		if _, err := f.r.Value(ctx, "TOKEN"); !errors.As(err, &nf) || nf.Store != s.name {
			t.Fatalf("deleted value: err %v, want a NotFoundError of %s", err, s.name)
		}
	})
}

// A failed first read is answered without calling the store again until
// the retry delay has passed, then read again.
func TestFirstReadFailure(t *testing.T) {
	eachStore(t, func(t *testing.T, s store) {
		f := s.newFixture(t, map[string]string{prefix + "TOKEN": "v1"})
		f.fail(400, "AccessDeniedException", "denied")
		ctx := context.Background()
		for range 3 {
			if _, err := f.r.Value(ctx, "TOKEN"); err == nil || !strings.Contains(err.Error(), "denied") {
				t.Fatalf("err %v", err)
			}
		}
		if n := len(f.requested()); n != 1 {
			t.Fatalf("%d calls for 3 lookups after a failure, want 1", n)
		}
		f.fail(0, "", "")
		f.advance(MaxRetryDelay)
		if v, err := f.r.Value(ctx, "TOKEN"); err != nil || v != "v1" {
			t.Fatalf("after the retry delay: %q %v", v, err)
		}
	})
}

// A lookup whose context is cancelled does not delay the next one.
func TestCancelledReadIsRetried(t *testing.T) {
	eachStore(t, func(t *testing.T, s store) {
		f := s.newFixture(t, map[string]string{prefix + "TOKEN": "v1"})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := f.r.Value(ctx, "TOKEN"); err == nil {
			t.Fatal("cancelled lookup succeeded")
		}
		if v, err := f.r.Value(context.Background(), "TOKEN"); err != nil || v != "v1" {
			t.Fatalf("next lookup: %q %v", v, err)
		}
	})
}

// Concurrent first lookups share the store's calls: one read of the
// prefix from SSM, one GetSecretValue per name from Secrets Manager. The
// fake holds its answers until every lookup has started, so they are all
// in flight at once.
func TestConcurrentLookups(t *testing.T) {
	eachStore(t, func(t *testing.T, s store) {
		f := s.newFixture(t, map[string]string{prefix + "A": "a", prefix + "B": "b"})
		want := []string{prefix + "A", prefix + "B"}
		if s.name == StoreSSM {
			want = []string{prefix}
		}
		release := f.hold()
		const n = 40
		var started, wg sync.WaitGroup
		started.Add(n)
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				name, want := "A", "a"
				if i%2 == 1 {
					name, want = "B", "b"
				}
				started.Done()
				if v, err := f.r.Value(context.Background(), name); err != nil || v != want {
					errs <- fmt.Errorf("%s: %q %v", name, v, err)
				}
			}()
		}
		started.Wait()
		// The reads reach the fake (and wait there); give the other
		// lookups a moment to pile up behind them before letting the
		// answers go.
		for len(f.requested()) < len(want) {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
		release()
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		got := f.requested()
		sort.Strings(got)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("calls for %q, want %q", got, want)
		}
	})
}

// Logs name values, never hold them: SSM reads log the names read and the
// parameters ignored, Secrets Manager reads the secrets.
func TestLogsHoldNoValues(t *testing.T) {
	eachStore(t, func(t *testing.T, s store) {
		values := []string{"ghp_value_one", "sk-value-two", "value-of-bad-name"}
		f := s.newFixture(t, map[string]string{prefix + "GITHUB_TOKEN": values[0], prefix + "API_KEY": values[1], prefix + "bad-name": values[2]})
		logged := []string{prefix + "GITHUB_TOKEN", prefix + "API_KEY"}
		if s.name == StoreSSM {
			logged = []string{"GITHUB_TOKEN", "API_KEY", prefix + "bad-name"}
		}
		ctx := context.Background()
		for _, name := range []string{"GITHUB_TOKEN", "API_KEY"} {
			if _, err := f.r.Value(ctx, name); err != nil {
				t.Fatal(err)
			}
		}
		f.fail(400, "AccessDeniedException", "denied")
		f.advance(time.Hour)
		if v, err := f.r.Value(ctx, "API_KEY"); err != nil || v != values[1] {
			t.Fatalf("stale value: %q %v", v, err)
		}
		out := f.logs()
		for _, want := range append(logged, "could not refresh") {
			if !strings.Contains(out, want) {
				t.Errorf("logs do not mention %q:\n%s", want, out)
			}
		}
		for _, v := range values {
			if strings.Contains(out, v) {
				t.Errorf("logs contain the secret value %q:\n%s", v, out)
			}
		}
	})
}

func TestNew(t *testing.T) {
	client := ssmtest.NewClient("http://127.0.0.1:1")
	tests := []struct {
		prefix  string
		client  SSMAPI
		wantErr string
	}{
		{"/toolrag/prod/", client, ""},
		{"/", client, ""},
		{"/a.b/c-d_e/", client, ""},
		{"/toolrag/prod", client, "must start and end with"},
		{"toolrag/prod/", client, "must start and end with"},
		{"", client, "not an SSM parameter path"},
		{"/toolrag//prod/", client, "not an SSM parameter path"},
		{"/tool rag/", client, "not an SSM parameter path"},
		{"/toolrag/prod/", nil, "no SSM client"},
	}
	for _, tc := range tests {
		r, err := New(Config{Prefix: tc.prefix, Client: tc.client})
		if tc.wantErr == "" {
			if err != nil || r.prefix != tc.prefix || r.ParameterName("X") != tc.prefix+"X" {
				t.Errorf("%q: %v", tc.prefix, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%q: err %v, want %q", tc.prefix, err, tc.wantErr)
		}
	}
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"TOKEN": true, "_x": true, "GITHUB_TOKEN_2": true, "a": true,
		"": false, "2FA": false, "MY-KEY": false, "a.b": false, "a/b": false, "é": false,
	} {
		if ValidName(name) != want {
			t.Errorf("ValidName(%q) = %v", name, !want)
		}
	}
}

// checkValue checks one lookup: the value, or an error mentioning every
// wantErr text and being a *NotFoundError exactly when notFound.
func checkValue(t *testing.T, got string, err error, want string, wantErr []string, notFound bool) {
	t.Helper()
	if len(wantErr) == 0 {
		if err != nil || got != want {
			t.Fatalf("got %q, %v; want %q", got, err, want)
		}
		return
	}
	if err == nil {
		t.Fatalf("got %q, want an error", got)
	}
	for _, w := range wantErr {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	var nf *NotFoundError
	if errors.As(err, &nf) != notFound {
		t.Errorf("error %v: NotFoundError %v, want %v", err, !notFound, notFound)
	}
}

// A prefix or store that is not valid does not stop the function: the
// lookup reads the environment and names the setting for a missing one.
func TestFuncFallsBackToEnvironment(t *testing.T) {
	env := map[string]string{"SET": "v", "AWS_SECRET_ACCESS_KEY": "a", "NOT_LISTED": "n", AllowEnvSetting: "SET,MISSING"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Prefix: "no-slash", LookupEnv: lookup}, "PREFIX_SETTING: secrets prefix"},
		{Config{Prefix: "/p/", Store: "vault", LookupEnv: lookup}, "STORE_SETTING: secrets store \"vault\""},
	} {
		f := Func(tc.cfg, "PREFIX_SETTING", "STORE_SETTING")
		if v, err := f(context.Background(), "SET"); err != nil || v != "v" {
			t.Errorf("%+v: SET = %q, %v", tc.cfg, v, err)
		}
		_, err := f(context.Background(), "MISSING")
		if err == nil || !strings.Contains(err.Error(), "MISSING is not set") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: MISSING error %v, want it to name %q", tc.cfg, err, tc.want)
		}
		if v, err := f(context.Background(), "AWS_SECRET_ACCESS_KEY"); err == nil || !strings.Contains(err.Error(), "reserved") {
			t.Errorf("%+v: AWS_SECRET_ACCESS_KEY = %q, %v; want refused as reserved", tc.cfg, v, err)
		}
		if v, err := f(context.Background(), "NOT_LISTED"); err == nil || !strings.Contains(err.Error(), "may not be read by registry headers") {
			t.Errorf("%+v: NOT_LISTED = %q, %v; want refused as not allowed", tc.cfg, v, err)
		}
	}
}
