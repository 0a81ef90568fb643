package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestServerConfigValidate(t *testing.T) {
	cases := []struct {
		cfg  ServerConfig
		want string // "" = valid
	}{
		{ServerConfig{Transport: "stdio", Command: "node", Args: []string{"x.js"}}, ""},
		{ServerConfig{Transport: "sse", URL: "http://127.0.0.1:9000/sse"}, ""},
		{ServerConfig{Transport: "streamable_http", URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer x"}}, ""},
		{ServerConfig{Transport: "stdio"}, "transport stdio needs a command"},
		{ServerConfig{Transport: "stdio", Command: "  "}, "transport stdio needs a command"},
		{ServerConfig{Transport: "stdio", Command: "x", Env: map[string]string{"A=B": "1"}}, `env name "A=B" is not a valid variable name`},
		{ServerConfig{Transport: "sse"}, "transport sse needs a url"},
		{ServerConfig{Transport: "streamable_http", URL: "/mcp"}, `url "/mcp" must be an absolute http:// or https:// URL`},
		{ServerConfig{Transport: "streamable_http", URL: "ftp://h/mcp"}, `url "ftp://h/mcp" must be an absolute http:// or https:// URL`},
		{ServerConfig{Transport: "streamable_http", URL: "http://h/mcp", Headers: map[string]string{"Bad Name": "x"}}, `header name "Bad Name" is not valid`},
		{ServerConfig{Transport: "sse", URL: "http://[::1"}, `url "http://[::1" is not a valid URL`},
		{ServerConfig{}, "transport is missing (stdio, sse or streamable_http)"},
		{ServerConfig{Transport: "websocket", URL: "ws://x"}, `unknown transport "websocket" (stdio, sse or streamable_http)`},
		{ServerConfig{Transport: "stdio", Command: "x", Timeout: -time.Second}, "timeout -1s is negative"},
	}
	for _, c := range cases {
		err := c.cfg.Validate()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if c.want == "" && got != "" || c.want != "" && !strings.HasPrefix(got, c.want) {
			t.Errorf("Validate(%+v) = %q, want %q", c.cfg, got, c.want)
		}
	}
}

func TestServerConfigTags(t *testing.T) {
	src := "transport: stdio\ncommand: python\nargs: [server.py]\ncwd: servers/x\nenv: {LOG_LEVEL: info}\n"
	var c ServerConfig
	if err := yaml.Unmarshal([]byte(src), &c); err != nil {
		t.Fatal(err)
	}
	if c.Command != "python" || c.Args[0] != "server.py" || c.Cwd != "servers/x" || c.Env["LOG_LEVEL"] != "info" {
		t.Errorf("yaml: %+v", c)
	}
	b, _ := json.Marshal(ServerConfig{Transport: "sse", URL: "http://h/sse", Headers: map[string]string{"A": "b"}, Timeout: time.Second})
	if string(b) != `{"transport":"sse","url":"http://h/sse","headers":{"A":"b"}}` {
		t.Errorf("json: %s", b)
	}
}

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Min: 100 * time.Millisecond, Max: time.Second}
	for n, want := range map[int]time.Duration{0: 0, 1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 60: time.Second} {
		if got := b.delay(n); got != want {
			t.Errorf("delay(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	if o.CallTimeout != 60*time.Second || o.ConnectTimeout != 20*time.Second || o.IdleTimeout != 5*time.Minute ||
		o.StdioPoolSize != 2 || o.MaxConcurrentPerServer != 16 || o.MaxResultBytes != 8<<20 || o.Logger == nil {
		t.Errorf("defaults = %+v", o)
	}
	if o := (Options{IdleTimeout: -1}).withDefaults(); o.IdleTimeout != -1 {
		t.Errorf("negative IdleTimeout (never) became %s", o.IdleTimeout)
	}
}

func TestErrorWording(t *testing.T) {
	cases := []struct {
		err  *Error
		want string
		is   []error
	}{
		{&Error{Server: "fs", Op: "tools/call", Err: contextProblem(canceledCtx(context.DeadlineExceeded, true), context.Background(), 30*time.Second, "")},
			`upstream "fs": tools/call did not answer within 30s`, []error{context.DeadlineExceeded}},
		{&Error{Server: "fs", Op: "tools/call", Err: contextProblem(canceledCtx(context.Canceled, false), canceledCtx(context.Canceled, false), time.Second, "")},
			`upstream "fs": tools/call was canceled by the caller`, []error{context.Canceled}},
		{&Error{Server: "fs", Op: "tools/list", Err: ErrUnknownServer},
			`upstream "fs": tools/list failed: no upstream server with this id is configured`, []error{ErrUnknownServer}},
		{&Error{Server: "big", Op: "resources/read", Err: tooLarge(9<<20+512<<10, 8<<20)},
			`upstream "big": resources/read failed: the server's response of 9.5 MiB is larger than the 8 MiB limit (MaxResultBytes)`, []error{ErrResultTooLarge}},
		{&Error{Server: "x", Op: "ping", Err: newProblem(ErrUnavailable, os.ErrNotExist, "could not start: %v", os.ErrNotExist)},
			`upstream "x": ping failed: could not start: file does not exist`, []error{ErrUnavailable, os.ErrNotExist}},
		{&Error{Server: "x", Op: "ping", Err: errors.New("plain")}, `upstream "x": ping failed: plain`, nil},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q\n         want %q", got, c.want)
		}
		for _, k := range c.is {
			if !errors.Is(c.err, k) {
				t.Errorf("%q is not %v", c.err, k)
			}
		}
	}
	if got := fmtBytes(512); got != "512 bytes" {
		t.Errorf("fmtBytes(512) = %q", got)
	}
	if got := fmtDuration(1500 * time.Millisecond); got != "1.5s" {
		t.Errorf("fmtDuration = %q", got)
	}
}

// canceledCtx returns a context that is already done; timeout makes it end
// with the call-timeout cause.
func canceledCtx(err error, timeout bool) context.Context {
	if timeout {
		ctx, cancel := context.WithTimeoutCause(context.Background(), -1, errCallTimeout)
		cancel()
		return ctx
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func TestChildEnvAndCommand(t *testing.T) {
	t.Setenv("UPSTREAM_INHERIT_ME", "yes")
	env := childEnv(map[string]string{"HOME": "/srv", "B": "2", "A": "1"}, []string{"UPSTREAM_INHERIT_ME", "NOT_SET_AT_ALL"})
	got := strings.Join(env, " ")
	want := fmt.Sprintf("PATH=%s UPSTREAM_INHERIT_ME=yes A=1 B=2 HOME=/srv", os.Getenv("PATH"))
	if got != want {
		t.Errorf("childEnv = %q\nwant %q", got, want)
	}

	dir := t.TempDir()
	exe := filepath.Join(dir, "my-server")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p, err := resolveCommand(ServerConfig{Command: "my-server", Env: map[string]string{"PATH": "relative:" + dir}}); err != nil || p != exe {
		t.Errorf("resolve with the server's PATH = %q, %v", p, err)
	}
	if _, err := resolveCommand(ServerConfig{Command: "my-server"}); err == nil {
		t.Error("found my-server in the gateway's PATH")
	}
	if p, err := resolveCommand(ServerConfig{Command: "./bin/x"}); err != nil || p != "./bin/x" {
		t.Errorf("relative path = %q, %v", p, err)
	}
}

func TestLogLimiter(t *testing.T) {
	l := newLogLimiter(3, 1)
	t0 := time.Unix(1000, 0)
	var got []string
	for i, at := range []time.Duration{0, 0, 0, 0, 0, 500 * time.Millisecond, 1500 * time.Millisecond, 1500 * time.Millisecond} {
		ok, held := l.allow(t0.Add(at))
		got = append(got, fmt.Sprintf("%d:%v/%d", i, ok, held))
	}
	want := "0:true/0 1:true/0 2:true/0 3:false/0 4:false/0 5:false/0 6:true/3 7:false/0"
	if strings.Join(got, " ") != want {
		t.Errorf("allow sequence = %s\nwant %s", strings.Join(got, " "), want)
	}
}
