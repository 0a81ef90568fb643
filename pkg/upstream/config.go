package upstream

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/upauth"
)

// Transports an upstream server can speak.
const (
	TransportStdio          = "stdio"
	TransportSSE            = "sse"
	TransportStreamableHTTP = "streamable_http"
)

// ServerConfig is one registry entry: how to reach one upstream MCP server.
type ServerConfig struct {
	// Transport is "stdio", "sse" or "streamable_http".
	Transport string `yaml:"transport" json:"transport"`

	// Command, Args, Cwd and Env start a stdio server. The child gets the
	// gateway's PATH and HOME (plus Options.InheritEnv) and Env on top;
	// nothing else of the gateway's environment.
	Command string            `yaml:"command,omitempty" json:"command,omitempty"`
	Args    []string          `yaml:"args,omitempty" json:"args,omitempty"`
	Cwd     string            `yaml:"cwd,omitempty" json:"cwd,omitempty"`
	Env     map[string]string `yaml:"env,omitempty" json:"env,omitempty"`

	// URL and Headers reach an sse or streamable_http server. Headers are
	// sent as they are (the config loader has expanded ${VAR} already).
	URL     string            `yaml:"url,omitempty" json:"url,omitempty"`
	Headers map[string]string `yaml:"headers,omitempty" json:"headers,omitempty"`

	// Timeout overrides Options.CallTimeout for this server (0 = default).
	Timeout time.Duration `yaml:"-" json:"-"`

	// Auth says how callers reach the server: static (nil: the Headers
	// above, one service identity) or per principal (pkg/upauth). A
	// per-principal server is reached over one connection per principal,
	// with the headers of that principal's credential (WithCredential).
	Auth *upauth.Config `yaml:"auth,omitempty" json:"auth,omitempty"`

	// Unprefixed is a gateway option, ignored by this package: expose the
	// server's tools, prompts and resources under their original names
	// instead of server__name and gateway://server/uri.
	Unprefixed bool `yaml:"unprefixed,omitempty" json:"unprefixed,omitempty"`
}

// Validate reports the first problem that would stop the server from being
// reached: an unknown transport, a stdio server without a command, an HTTP
// server without an absolute http(s) URL.
func (c ServerConfig) Validate() error {
	switch c.Transport {
	case TransportStdio:
		if strings.TrimSpace(c.Command) == "" {
			return errors.New("transport stdio needs a command")
		}
		for k := range c.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return fmt.Errorf("env name %q is not a valid variable name", k)
			}
		}
	case TransportSSE, TransportStreamableHTTP:
		if c.URL == "" {
			return fmt.Errorf("transport %s needs a url", c.Transport)
		}
		u, err := url.Parse(c.URL)
		if err != nil {
			return fmt.Errorf("url %q is not a valid URL: %w", c.URL, err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("url %q must be an absolute http:// or https:// URL", c.URL)
		}
		for k := range c.Headers {
			if k == "" || strings.ContainsAny(k, " :\r\n") {
				return fmt.Errorf("header name %q is not valid", k)
			}
		}
	case "":
		return errors.New("transport is missing (stdio, sse or streamable_http)")
	default:
		return fmt.Errorf("unknown transport %q (stdio, sse or streamable_http)", c.Transport)
	}
	if c.Timeout < 0 {
		return fmt.Errorf("timeout %s is negative", c.Timeout)
	}
	return c.Auth.Validate(c.Transport)
}

// Backoff bounds the wait before a crashed stdio server is started again.
// The wait doubles with every consecutive failure, from Min up to Max.
type Backoff struct {
	Min, Max time.Duration
}

// Options configures a Manager. Zero fields take the defaults shown.
type Options struct {
	// CallTimeout bounds one request to an upstream (default 60s); a
	// server's ServerConfig.Timeout overrides it. It also bounds the wait
	// for a free call slot.
	CallTimeout time.Duration
	// ConnectTimeout bounds starting a stdio process or opening an HTTP
	// session, initialize included (default 20s).
	ConnectTimeout time.Duration
	// IdleTimeout stops a stdio process that has served no call for this
	// long (default 5m; negative = never).
	IdleTimeout time.Duration
	// StdioPoolSize is the number of long-lived processes per stdio server
	// (default 2). A second process starts only when the first is busy.
	StdioPoolSize int
	// MaxConcurrentPerServer bounds the calls in flight to one server
	// (default 16); further calls wait for a slot.
	MaxConcurrentPerServer int
	// MaxResultBytes bounds one JSON-RPC response from an upstream
	// (default 8 MiB); a larger one fails the call with ErrResultTooLarge.
	MaxResultBytes int64
	// MaxListTools bounds the tools kept from one server's tools/list
	// (default 2,000) and MaxListPages the pages followed (default 100):
	// ListTools stops there and returns what it kept with an error that
	// matches ErrListTruncated, so a hostile or broken upstream cannot make
	// the gateway hold an unbounded catalog.
	MaxListTools int
	MaxListPages int
	// RestartBackoff paces restarts of crashing stdio servers
	// (default 200ms doubling up to 30s).
	RestartBackoff Backoff
	// InheritEnv names more variables of the gateway's environment that
	// stdio servers get, besides PATH and HOME (e.g. "LANG", "TMPDIR").
	InheritEnv []string
	// Logger receives connection events and the stderr of stdio servers
	// (rate-limited). Default slog.Default().
	Logger *slog.Logger
}

// Defaults.
const (
	DefaultCallTimeout            = 60 * time.Second
	DefaultConnectTimeout         = 20 * time.Second
	DefaultIdleTimeout            = 5 * time.Minute
	DefaultStdioPoolSize          = 2
	DefaultMaxConcurrentPerServer = 16
	DefaultMaxResultBytes         = 8 << 20
	DefaultMaxListTools           = 2000
	DefaultMaxListPages           = 100
)

func (o Options) withDefaults() Options {
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.StdioPoolSize <= 0 {
		o.StdioPoolSize = DefaultStdioPoolSize
	}
	if o.MaxConcurrentPerServer <= 0 {
		o.MaxConcurrentPerServer = DefaultMaxConcurrentPerServer
	}
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = DefaultMaxResultBytes
	}
	if o.MaxListTools <= 0 {
		o.MaxListTools = DefaultMaxListTools
	}
	if o.MaxListPages <= 0 {
		o.MaxListPages = DefaultMaxListPages
	}
	if o.RestartBackoff.Min <= 0 {
		o.RestartBackoff.Min = 200 * time.Millisecond
	}
	if o.RestartBackoff.Max <= 0 {
		o.RestartBackoff.Max = 30 * time.Second
	}
	if o.RestartBackoff.Max < o.RestartBackoff.Min {
		o.RestartBackoff.Max = o.RestartBackoff.Min
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// delay returns the wait before the next start after n consecutive failures.
func (b Backoff) delay(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	d := b.Min
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// equal reports whether two configs describe the same connection.
func (c ServerConfig) equal(o ServerConfig) bool {
	if c.Transport != o.Transport || c.Command != o.Command || c.Cwd != o.Cwd ||
		c.URL != o.URL || c.Timeout != o.Timeout || len(c.Args) != len(o.Args) ||
		!sameMap(c.Env, o.Env) || !sameMap(c.Headers, o.Headers) || !upauth.Equal(c.Auth, o.Auth) {
		return false
	}
	for i := range c.Args {
		if c.Args[i] != o.Args[i] {
			return false
		}
	}
	return true
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
