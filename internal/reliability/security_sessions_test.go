package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/health"
	"github.com/toolrag/mcp-gateway/pkg/session"
)

// Attacks of issue #11 against a real local gateway. Each test names the
// finding it guards (docs/reliability.md, "Attacks tried").

var legacyHdr = map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
	"Mcp-Protocol-Version": mcp.LATEST_LEGACY_PROTOCOL_VERSION}

// openLegacySession initializes a legacy-protocol session with key over raw
// HTTP and returns its id.
func openLegacySession(t *testing.T, url, key string) string {
	t.Helper()
	init := mcpBody("initialize", `{"protocolVersion":"`+mcp.LATEST_LEGACY_PROTOCOL_VERSION+`","capabilities":{"sampling":{}},"clientInfo":{"name":"owner","version":"1"}}`)
	code, hdr, body := httpDo(t, nil, "POST", url, key, init, legacyHdr)
	sid := hdr.Get("Mcp-Session-Id")
	if code != 200 || !session.ValidID(sid) {
		t.Fatalf("initialize: %d %q %s", code, sid, body)
	}
	return sid
}

// sessionDo sends one request in a session and returns the status and up
// to 4 KiB of the body; a GET stream is cut after its headers.
func sessionDo(t *testing.T, method, url, key, sid, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range legacyHdr {
		req.Header.Set(k, v)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") && method == http.MethodGet {
		return resp.StatusCode, "(event stream)"
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}

// TestSessionBoundToKey (finding 2): another key that knows a session's id
// cannot use it. POST, GET (the stream that carries the owner's sampling
// requests) and DELETE with the owner's session id are answered exactly
// like an unknown session, and the owner's session lives on. No session id
// reaches the log.
func TestSessionBoundToKey(t *testing.T) {
	reg := "servers:\n" + stdioEntry(t, "echo", "") + stdioEntry(t, "other", "")
	g := startGateway(t, gwOpts{Registry: reg, Keys: matrixKeys})
	const owner, intruder, admin = "sekret-full-9f8e", "sekret-nogrant-5b4a", "sekret-admin-a1b2"
	sid := openLegacySession(t, g.url, owner)
	unknown := session.NewID()
	call := mcpBody("tools/call", `{"name":"find_tools","arguments":{"query":"echo"}}`)

	for _, key := range []string{intruder, admin} {
		for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			body := ""
			if method == http.MethodPost {
				body = call
			}
			code, out := sessionDo(t, method, g.url, key, sid, body)
			ucode, uout := sessionDo(t, method, g.url, key, unknown, body)
			if code != http.StatusNotFound || code != ucode || out != uout {
				t.Errorf("%s with another key's session: %d %q; with an unknown session: %d %q; want the same 404",
					method, code, out, ucode, uout)
			}
		}
	}
	// A sampling response posted into the owner's session by another key.
	if code, out := sessionDo(t, http.MethodPost, g.url, intruder, sid, `{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":{"type":"text","text":"pwned"},"model":"x"}}`); code != http.StatusNotFound {
		t.Errorf("sampling response into another key's session: %d %q", code, out)
	}
	// The owner's session survived the foreign DELETEs and still works.
	if code, out := sessionDo(t, http.MethodPost, g.url, owner, sid, call); code != 200 || !strings.Contains(out, "echo__") {
		t.Fatalf("owner's call after the attacks: %d %s", code, out)
	}
	if code, out := sessionDo(t, http.MethodGet, g.url, owner, sid, ""); code != 200 {
		t.Fatalf("owner's GET stream: %d %s", code, out)
	}
	if code, out := sessionDo(t, http.MethodDelete, g.url, owner, sid, ""); code != 200 {
		t.Fatalf("owner's DELETE: %d %s", code, out)
	}
	if code, _ := sessionDo(t, http.MethodPost, g.url, owner, sid, call); code != http.StatusNotFound {
		t.Fatalf("call after the owner's DELETE: %d", code)
	}
	if logs := g.logs.String(); strings.Contains(logs, sid) || strings.Contains(logs, unknown) {
		t.Errorf("a session id appears in the log")
	}
}

// Upstream credentials planted where the gateway sees them: in upstream
// URLs (password, token query), and in the stderr of stdio servers (a
// connection string, printed at start).
const (
	pgPassword     = "pg-PASSWORD-123"
	deadPassword   = "dead-PASSWORD-321"
	urlPassword    = "url-PASSWORD-456"
	urlToken       = "url-TOKEN-789"
	leakKeyNoGrant = "sekret-nogrant-5b4a"
	leakKeyPG      = "sekret-pg-2468"
	leakKeyAdmin   = "sekret-admin-a1b2"
)

const leakKeys = `keys:
  - id: admin
    secret: "sekret-admin-a1b2"
    admin: true
    servers: {echo: {}, pgsrv: {}, deadsrv: {}, remotesrv: {}}
  - id: nogrant
    secret: "sekret-nogrant-5b4a"
    servers: {}
  - id: pguser
    secret: "sekret-pg-2468"
    servers: {echo: {}, pgsrv: {}}
`

func leakGateway(t *testing.T) *gateway {
	reg := "servers:\n" + stdioEntry(t, "echo", "") +
		stdioEntry(t, "pgsrv", "", "-misbehave=crash-on-call", "-stderr-line", "connecting to postgres://app:"+pgPassword+"@db.internal/app") +
		stdioEntry(t, "deadsrv", "", "-misbehave=exit-at-start", "-stderr-line", "DATABASE_URL=postgres://app:"+deadPassword+"@db/app") +
		"  remotesrv:\n    transport: streamable_http\n    url: \"http://app:" + urlPassword + "@127.0.0.1:9/mcp?token=" + urlToken + "\"\n"
	g := startGateway(t, gwOpts{Registry: reg, Keys: leakKeys})
	// One health probe round, as the background loop would run it.
	g.g.Health.Replace(health.ProbeAll(context.Background(), g.g.Upstreams, 5*time.Second, 4))
	return g
}

func assertNoLeak(t *testing.T, where, content string) {
	t.Helper()
	for _, s := range []string{pgPassword, deadPassword, urlPassword, urlToken} {
		if strings.Contains(content, s) {
			t.Errorf("%s carries the upstream credential %q: %s", where, s, content)
		}
	}
}

// TestHealthForTheRightAudience (finding 4): /tool-rag/health tells a
// non-admin key only how many of its granted servers are up (no server
// ids, URLs or stderr), and an admin the details without credentials.
func TestHealthForTheRightAudience(t *testing.T) {
	g := leakGateway(t)
	health := func(key string) (map[string]any, string) {
		t.Helper()
		code, _, body := httpDo(t, nil, "GET", g.base+"/tool-rag/health", key, "", nil)
		if code != 200 {
			t.Fatalf("health: %d %s", code, body)
		}
		var out map[string]any
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatal(err)
		}
		return out, body
	}
	for _, tc := range []struct {
		key             string
		granted, upWant float64
	}{{leakKeyNoGrant, 0, 0}, {leakKeyPG, 2, 2}} {
		out, body := health(tc.key)
		assertNoLeak(t, "non-admin health", body)
		for _, id := range []string{"pgsrv", "deadsrv", "remotesrv", "echo", "postgres", "127.0.0.1", "stderr"} {
			if strings.Contains(body, id) {
				t.Errorf("health for a non-admin key names %q: %s", id, body)
			}
		}
		srv, _ := out["servers"].(map[string]any)
		if srv["granted"] != tc.granted || srv["up"] != tc.upWant {
			t.Errorf("health for a non-admin key: %s; want granted %v, up %v", body, tc.granted, tc.upWant)
		}
	}
	_, body := health(leakKeyAdmin)
	assertNoLeak(t, "admin health", body)
	if !strings.Contains(body, "deadsrv") || !strings.Contains(body, "remotesrv") {
		t.Errorf("admin health lacks the down servers' details: %s", body)
	}
	assertNoLeak(t, "the log", g.logs.String())
}

// TestUpstreamStderrNotEchoed (finding 4): a stdio server that dies during
// a call leaves a connection string on stderr; the caller's error does
// not carry it, the operator's log has the stderr with the password
// removed.
func TestUpstreamStderrNotEchoed(t *testing.T) {
	g := leakGateway(t)
	c := connect(t, g.url, leakKeyPG, false, nil)
	res, err := testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": "pgsrv__echo", "arguments": map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	msg := testenv.Text(res)
	if !res.IsError || !strings.Contains(msg, "pgsrv__echo failed") {
		t.Fatalf("call to a crashing server: %q", msg)
	}
	assertNoLeak(t, "the call error", msg)
	if strings.Contains(msg, "postgres://") || strings.Contains(msg, "crashing on tools/call") {
		t.Errorf("the call error echoes the upstream's stderr: %q", msg)
	}
	logs := g.logs.String()
	assertNoLeak(t, "the log", logs)
	if !strings.Contains(logs, "postgres://[redacted]@db.internal/app") {
		t.Errorf("the log lacks the (redacted) stderr for operators")
	}
}

const limitKeys = `keys:
  - id: batch
    secret: "sekret-batch-8642"
    servers: {echo: {}}
    rate_limit: {rate: 0.001, burst: 3}
  - id: full
    secret: "sekret-full-9f8e"
    servers: {echo: {}}
`

// TestBatchRateLimit (finding 5): each call of a run_tools batch costs one
// rate-limit token; the calls beyond the tokens left are refused one by
// one with status 429 and are not run.
func TestBatchRateLimit(t *testing.T) {
	g := startGateway(t, gwOpts{Registry: "servers:\n" + stdioEntry(t, "echo", ""), Keys: limitKeys})
	const key = "sekret-batch-8642"
	sid := openLegacySession(t, g.url, key) // token 1 of 3
	calls := make([]map[string]any, 4)
	for i := range calls {
		calls[i] = map[string]any{"call_name": "echo__echo", "arguments": map[string]any{"text": fmt.Sprint("call ", i)}}
	}
	args, _ := json.Marshal(map[string]any{"name": "run_tools", "arguments": map[string]any{"calls": calls}})
	code, out := sessionDo(t, http.MethodPost, g.url, key, sid, mcpBody("tools/call", string(args))) // token 2, then 1 more for the batch
	if code != 200 {
		t.Fatalf("run_tools: %d %s", code, out)
	}
	var b struct {
		Results []struct {
			OK     bool   `json:"ok"`
			Status int    `json:"status"`
			Error  string `json:"error"`
		} `json:"results"`
	}
	var env struct {
		Result struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	_ = json.Unmarshal([]byte(sseData(out)), &env)
	if err := json.Unmarshal(env.Result.StructuredContent, &b); err != nil || len(b.Results) != 4 {
		t.Fatalf("run_tools answer: %v %s", err, out)
	}
	for i, r := range b.Results {
		want429 := i >= 2
		if want429 != (r.Status == http.StatusTooManyRequests) || want429 == r.OK {
			t.Errorf("call %d: ok %v, status %d, error %q; want 429: %v", i, r.OK, r.Status, r.Error, want429)
		}
		if want429 && (!strings.Contains(r.Error, "rate limit") || !strings.Contains(r.Error, "retry in")) {
			t.Errorf("call %d: the refusal does not say why: %q", i, r.Error)
		}
	}
	if n := strings.Count(g.logs.String(), `msg="tool call" key=batch`); n != 2 {
		t.Errorf("%d calls reached the upstream, want 2", n)
	}
}

// sseData returns the data of the last SSE event in body, or body itself
// when it is plain JSON.
func sseData(body string) string {
	data := body
	for _, line := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = d
		}
	}
	return data
}

// TestAuthFailureLimit (finding 5): after a burst of failed
// authentications from one address, every request from it with a
// credential not seen to work is answered 429 with Retry-After before its
// key is looked up (even a valid key never used before: a
// right guess is not told apart), X-Forwarded-For does not get around it
// unless trusted, and other addresses are unaffected.
func TestAuthFailureLimit(t *testing.T) {
	g := startGateway(t, gwOpts{Registry: "servers:\n" + stdioEntry(t, "echo", ""), Keys: limitKeys, NoSync: true, Env: map[string]string{
		"MCP_GATEWAY_AUTH_FAILURE_BURST": "5", "MCP_GATEWAY_AUTH_FAILURE_RATE": "0.01",
	}})
	retrieve := func(key string, hdr map[string]string) (int, http.Header, string) {
		return httpDo(t, nil, "POST", g.base+"/tool-rag/retrieve", key, `{"query":"echo"}`, hdr)
	}
	for i := 0; i < 5; i++ {
		if code, _, body := retrieve(fmt.Sprintf("guess-%d", i), nil); code != http.StatusUnauthorized {
			t.Fatalf("guess %d within the burst: %d %s", i, code, body)
		}
	}
	for _, tc := range []struct {
		what, key string
		hdr       map[string]string
	}{
		{"the next guess", "guess-5", nil},
		{"a valid key from the same address", "sekret-full-9f8e", nil},
		{"a guess with a spoofed X-Forwarded-For", "guess-6", map[string]string{"X-Forwarded-For": "203.0.113.7"}},
		{"a guess on /mcp", "guess-7", nil},
	} {
		code, hdr, body := retrieve(tc.key, tc.hdr)
		if tc.what == "a guess on /mcp" {
			code, hdr, body = httpDo(t, nil, "POST", g.url, tc.key, mcpBody("ping", "{}"), legacyHdr)
		}
		ra, _ := strconv.Atoi(hdr.Get("Retry-After"))
		if code != http.StatusTooManyRequests || ra < 1 || !strings.Contains(body, "failed authentication") {
			t.Errorf("%s: %d (Retry-After %q) %s; want 429 with Retry-After", tc.what, code, hdr.Get("Retry-After"), body)
		}
	}
	// Another address is not affected (the gateway trusts X-Forwarded-For
	// only when told to: a second gateway that does stands for it).
	g2 := startGateway(t, gwOpts{Registry: "servers:\n" + stdioEntry(t, "echo", ""), Keys: limitKeys, NoSync: true, Env: map[string]string{
		"MCP_GATEWAY_AUTH_FAILURE_BURST": "2", "MCP_GATEWAY_AUTH_FAILURE_RATE": "0.01", "MCP_GATEWAY_TRUST_FORWARDED_FOR": "1",
	}})
	from := func(addr, key string) int {
		code, _, _ := httpDo(t, nil, "POST", g2.base+"/tool-rag/retrieve", key, `{"query":"echo"}`, map[string]string{"X-Forwarded-For": "198.51.100.1, " + addr})
		return code
	}
	for i := 0; i < 2; i++ {
		from("203.0.113.9", fmt.Sprintf("guess-%d", i)) // distinct guesses: a repeated one counts once
	}
	if code := from("203.0.113.9", "sekret-full-9f8e"); code != http.StatusTooManyRequests {
		t.Errorf("trusted X-Forwarded-For: the throttled address got %d", code)
	}
	if code := from("203.0.113.10", "sekret-full-9f8e"); code != http.StatusOK {
		t.Errorf("trusted X-Forwarded-For: another address got %d, want 200", code)
	}
}

// servedGateway is `toolrag serve` run as a process.
type servedGateway struct {
	base    string
	out     *testenv.Buffer
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process has exited
	exitErr error         // its Wait error, once exited is closed
}

// serve starts `toolrag serve` with the config in dir and extra env, and
// waits until it answers GET /health or exits.
func serve(t *testing.T, dir string, extra map[string]string) *servedGateway {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	env := gatewayEnv(dir)
	env["MCP_GATEWAY_PORT"] = strconv.Itoa(port)
	for k, v := range extra {
		env[k] = v
	}
	cmdEnv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		cmdEnv = append(cmdEnv, k+"="+v)
	}
	s := &servedGateway{base: fmt.Sprintf("http://127.0.0.1:%d", port), out: &testenv.Buffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(toolragBin(t), "serve")
	s.cmd.Env = cmdEnv
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exitErr = s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return s
		default:
		}
		if resp, err := http.Get(s.base + "/health"); err == nil {
			resp.Body.Close()
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("toolrag serve did not come up:\n%s", s.out.String())
	return nil
}

// TestKeyRevocationByReload (finding 6): revoking a key in keys.yaml takes
// effect within seconds, without a restart; a broken keys.yaml keeps the
// previous keys and the error names file:line; so does SIGHUP.
func TestKeyRevocationByReload(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "registry.yaml"), "servers:\n"+stdioEntry(t, "echo", ""))
	keys := func(disabled bool) string {
		return fmt.Sprintf("keys:\n  - id: admin\n    secret: \"sekret-admin-a1b2\"\n    admin: true\n    servers: {echo: {}}\n"+
			"  - id: victim\n    secret: \"sekret-victim-7777\"\n    servers: {echo: {}}\n    disabled: %v\n", disabled)
	}
	writeFile(t, filepath.Join(dir, "keys.yaml"), keys(false))
	s := serve(t, dir, map[string]string{"MCP_GATEWAY_CONFIG_POLL": "0.2"})
	status := func(key string) int {
		code, _, _ := httpDo(t, nil, "GET", s.base+"/tool-rag/health", key, "", nil)
		return code
	}
	if c := status("sekret-victim-7777"); c != 200 {
		t.Fatalf("the key before revocation: %d\n%s", c, s.out.String())
	}
	// A broken file: the previous keys stay in force, the log says where.
	writeFile(t, filepath.Join(dir, "keys.yaml"), keys(false)+"  - id: [broken\n")
	testenv.Eventually(t, 5*time.Second, "the reload error in the log", func() bool { return strings.Contains(s.out.String(), "keys.yaml:") })
	if c := status("sekret-victim-7777"); c != 200 {
		t.Fatalf("after a broken keys.yaml the key got %d; the previous keys must stay in force", c)
	}
	revoked := time.Now()
	writeFile(t, filepath.Join(dir, "keys.yaml"), keys(true))
	testenv.Eventually(t, 5*time.Second, "the revoked key to be refused", func() bool { return status("sekret-victim-7777") == http.StatusUnauthorized })
	t.Logf("revocation took effect after %s", time.Since(revoked).Round(10*time.Millisecond))
	if c := status("sekret-admin-a1b2"); c != 200 {
		t.Fatalf("the other key after the reload: %d", c)
	}
}

// TestKeyRevocationBySIGHUP: with polling off, SIGHUP reloads keys.yaml.
func TestKeyRevocationBySIGHUP(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "registry.yaml"), "servers:\n"+stdioEntry(t, "echo", ""))
	writeFile(t, filepath.Join(dir, "keys.yaml"), "keys:\n  - id: victim\n    secret: \"sekret-victim-7777\"\n    servers: {echo: {}}\n")
	s := serve(t, dir, map[string]string{"MCP_GATEWAY_CONFIG_POLL": "0"})
	status := func() int {
		code, _, _ := httpDo(t, nil, "GET", s.base+"/tool-rag/health", "sekret-victim-7777", "", nil)
		return code
	}
	if c := status(); c != 200 {
		t.Fatalf("before: %d", c)
	}
	writeFile(t, filepath.Join(dir, "keys.yaml"), "keys:\n  - id: other\n    secret: \"sekret-other-8888\"\n")
	time.Sleep(300 * time.Millisecond)
	if c := status(); c != 200 {
		t.Fatalf("with polling off the file was reloaded without SIGHUP: %d", c)
	}
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, "the removed key to be refused after SIGHUP", func() bool { return status() == http.StatusUnauthorized })
}

// TestServeSafeByDefault (finding 6): `toolrag serve` listens on loopback
// unless MCP_GATEWAY_HOST says otherwise, and refuses to listen beyond it
// while a key of config/keys.example.yaml is active.
func TestServeSafeByDefault(t *testing.T) {
	example, err := os.ReadFile(filepath.Join(testenv.Root(t), "config", "keys.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	reg := "servers:\n" + stdioEntry(t, "echo", "")

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "registry.yaml"), reg)
	writeFile(t, filepath.Join(dir, "keys.yaml"), string(example))
	s := serve(t, dir, map[string]string{"MCP_GATEWAY_HOST": "0.0.0.0"})
	select {
	case <-s.exited:
		if out, err := s.out.String(), s.exitErr; err == nil || !strings.Contains(out, "keys.example.yaml") || !strings.Contains(out, "MCP_GATEWAY_HOST") {
			t.Errorf("serve on 0.0.0.0 with the example keys: exit %v, output:\n%s", err, out)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("serve on 0.0.0.0 with the example keys is running:\n%s", s.out.String())
	}

	dir = t.TempDir()
	writeFile(t, filepath.Join(dir, "registry.yaml"), reg)
	writeFile(t, filepath.Join(dir, "keys.yaml"), string(example))
	s = serve(t, dir, nil) // the default host
	select {
	case <-s.exited:
		t.Fatalf("serve with the default host exited: %v\n%s", s.exitErr, s.out.String())
	default:
	}
	// Log lines reach stderr through a buffer (pkg/logwriter): shortly.
	testenv.Eventually(t, 5*time.Second, "serve with the default host to say it listens on loopback", func() bool {
		return strings.Contains(s.out.String(), "addr=127.0.0.1:")
	})
}

// TestKeyExpiry (finding 6): a key past its expires_at is refused like a
// revoked one; one whose expiry is ahead works.
func TestKeyExpiry(t *testing.T) {
	keys := `keys:
  - id: old
    secret: "sekret-expired-1111"
    servers: {echo: {}}
    expires_at: 2020-01-31
  - id: later
    secret: "sekret-later-2222"
    servers: {echo: {}}
    expires_at: "2999-01-01T00:00:00Z"
`
	g := startGateway(t, gwOpts{Registry: "servers:\n" + stdioEntry(t, "echo", ""), Keys: keys, NoSync: true})
	for key, want := range map[string]int{"sekret-expired-1111": http.StatusUnauthorized, "sekret-later-2222": http.StatusOK} {
		for _, path := range []string{"/tool-rag/health", "/mcp"} {
			code, _, body := httpDo(t, nil, "POST", g.base+path, key, mcpBody("ping", "{}"), legacyHdr)
			if path == "/tool-rag/health" {
				code, _, body = httpDo(t, nil, "GET", g.base+path, key, "", nil)
			}
			if (code == http.StatusUnauthorized) != (want == http.StatusUnauthorized) {
				t.Errorf("%s with key %s: %d %s, want %d", path, key, code, body, want)
			}
		}
	}
}
