// Package bridge serves a stdio MCP server over Streamable HTTP: it runs
// the server's command as a small pool of processes (pkg/upstream does the
// pooling, restarts with backoff and worded errors) and mirrors its tools,
// prompts, resources and resource templates, under their original names
// and URIs, on an mcp-go server that many HTTP clients share.
//
// It is what runs inside each Fargate task of a stdio server
// (`toolrag bridge -- <command> [args...]`), and works the same anywhere:
//
//	b, err := bridge.New(ctx, bridge.Config{Command: "npx", Args: []string{"-y", "some-mcp-server"}})
//	...
//	defer b.Close()
//	http.ListenAndServe(":8080", b.Handler()) // /mcp and /health
//
// The mirrored lists are refreshed every Config.RefreshInterval, right
// after a call finds the process gone, and when a new process appears in
// the pool; a change is announced to clients with a list_changed
// notification. GET /health pings the server through the pool and answers
// 200 with the number of live processes, or 503 with the reason.
package bridge

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/httpserve"
	"github.com/toolrag/mcp-gateway/pkg/syncer"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// Config says which stdio server to run and how. Zero fields take the
// defaults shown.
type Config struct {
	// Command and Args start the server; Cwd is its working directory
	// (default: the bridge's).
	Command string
	Args    []string
	Cwd     string
	// Env is set in the server's environment. Besides Env the server gets
	// only PATH, HOME and the variables named in InheritEnv from the
	// bridge's environment (the CLI passes all of them, since on Fargate
	// the task's environment is meant for the server).
	Env        map[string]string
	InheritEnv []string
	// Name labels the server in errors and logs (default: the command's
	// base name). The MCP serverInfo is the child's own.
	Name string

	// PoolSize is the number of server processes (default 2); a second
	// process starts only while the first is busy.
	PoolSize int
	// MaxConcurrent bounds the calls in flight to the server (default 16);
	// more wait for a slot, at most CallTimeout.
	MaxConcurrent int
	// CallTimeout bounds one call to the server (default 60s).
	CallTimeout time.Duration
	// ConnectTimeout bounds starting a process, initialize included
	// (default 20s).
	ConnectTimeout time.Duration
	// RestartBackoff paces restarts of a crashing server (default 200ms
	// doubling up to 30s).
	RestartBackoff upstream.Backoff
	// IdleTimeout stops a process that served nothing for this long
	// (default: never, so the server stays warm).
	IdleTimeout time.Duration

	// RefreshInterval is how often the server's lists are re-read
	// (default 60s; negative: only after a restart).
	RefreshInterval time.Duration
	// HealthTimeout bounds the ping behind GET /health (default 5s).
	HealthTimeout time.Duration
	// Path is where MCP is served (default /mcp).
	Path string
	// Token, when set, is the hop credential: every request, /health
	// included, must carry "Authorization: Bearer <Token>" and is
	// answered 401 otherwise (at least MinTokenLength characters). On
	// Fargate it is the server's Secrets Manager secret, which the
	// gateway sends from the registry entry's header.
	Token string

	// Logger receives the bridge's events and the server's stderr
	// (default slog.Default()).
	Logger *slog.Logger

	// SyncTrigger, when set, is called when the server announces a change
	// of its tools, prompts or resources (notifications/*/list_changed),
	// after the bridge re-read its lists: on AWS it invokes the sync
	// function for this server (toolrag bridge -sync-function). A server
	// that announces changes in a loop is damped (syncer.Live) and
	// reported in GET /health.
	SyncTrigger func(ctx context.Context) error
}

// Defaults.
const (
	DefaultPoolSize        = 2
	DefaultRefreshInterval = time.Minute
	DefaultHealthTimeout   = 5 * time.Second
	DefaultPath            = "/mcp"
)

// markerVar is set in every child's environment to the bridge's instance
// id, so that PIDs can tell its processes from any other.
const markerVar = "TOOLRAG_BRIDGE_ID"

func (c Config) withDefaults() (Config, error) {
	if strings.TrimSpace(c.Command) == "" {
		return c, errors.New("no server command: give the stdio server's command after --, e.g. toolrag bridge -- npx -y @modelcontextprotocol/server-memory")
	}
	if c.PoolSize < 0 {
		return c, fmt.Errorf("pool size %d is negative", c.PoolSize)
	}
	if c.MaxConcurrent < 0 {
		return c, fmt.Errorf("max concurrent calls %d is negative", c.MaxConcurrent)
	}
	if c.CallTimeout < 0 || c.ConnectTimeout < 0 || c.HealthTimeout < 0 {
		return c, errors.New("timeouts must not be negative")
	}
	if c.Path == "" {
		c.Path = DefaultPath
	}
	if !strings.HasPrefix(c.Path, "/") || strings.ContainsAny(c.Path, " ?#{}") {
		return c, fmt.Errorf("path %q must be an absolute URL path such as /mcp", c.Path)
	}
	if c.Path == "/health" || c.Path == "/" {
		return c, fmt.Errorf("path %q is not allowed: /health is the health check and / would hide it", c.Path)
	}
	if c.Token != "" && len(c.Token) < MinTokenLength {
		return c, fmt.Errorf("the hop credential is %d characters; use at least %d (a random secret)", len(c.Token), MinTokenLength)
	}
	for k := range c.Env {
		if k == markerVar || (k == TokenEnv && c.Token != "") {
			return c, fmt.Errorf("env %s is reserved for the bridge", k)
		}
	}
	if c.Name == "" {
		c.Name = filepath.Base(c.Command)
	}
	if c.PoolSize == 0 {
		c.PoolSize = DefaultPoolSize
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = upstream.DefaultCallTimeout
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = upstream.DefaultConnectTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = -1
	}
	if c.RefreshInterval == 0 {
		c.RefreshInterval = DefaultRefreshInterval
	}
	if c.HealthTimeout == 0 {
		c.HealthTimeout = DefaultHealthTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

// Bridge serves one stdio MCP server over Streamable HTTP. It is safe for
// concurrent use.
type Bridge struct {
	cfg    Config
	id     string // the server's id in the Manager (Config.Name)
	marker string // value of markerVar in the children's environment
	log    *slog.Logger
	m      *upstream.Manager
	live   *syncer.Live // the child's list changes (Config.SyncTrigger)
	info   upstream.ServerInfo
	srv    *server.MCPServer
	mcp    *server.StreamableHTTPServer
	mux    *http.ServeMux
	start  time.Time

	refreshMu sync.Mutex // one refresh at a time
	mu        sync.Mutex
	mirror    mirror
	seenPIDs  map[int]bool // processes whose lists the mirror reflects

	draining  atomic.Bool
	kick      chan struct{}
	ctx       context.Context // canceled by Close
	cancel    context.CancelFunc
	loopDone  chan struct{}
	closeOnce sync.Once
}

// New starts the server (one process), reads its tools, prompts, resources
// and resource templates, and returns a Bridge that serves them. It fails
// when the server does not start or cannot be listed, with the reason
// (including the server's last stderr lines).
func New(ctx context.Context, cfg Config) (*Bridge, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("bridge: %w", err)
	}
	b := &Bridge{
		cfg:      cfg,
		id:       cfg.Name,
		marker:   newMarker(),
		log:      cfg.Logger.With("component", "bridge", "server", cfg.Name),
		start:    time.Now(),
		seenPIDs: map[int]bool{},
		kick:     make(chan struct{}, 1),
		loopDone: make(chan struct{}),
	}
	env := make(map[string]string, len(cfg.Env)+1)
	for k, v := range cfg.Env {
		env[k] = v
	}
	env[markerVar] = b.marker
	b.m = upstream.NewManager(upstream.Options{
		CallTimeout:            cfg.CallTimeout,
		ConnectTimeout:         cfg.ConnectTimeout,
		IdleTimeout:            cfg.IdleTimeout,
		StdioPoolSize:          cfg.PoolSize,
		MaxConcurrentPerServer: cfg.MaxConcurrent,
		RestartBackoff:         cfg.RestartBackoff,
		InheritEnv:             withoutVar(cfg.InheritEnv, TokenEnv), // the hop credential is the bridge's, never the server's
		Logger:                 cfg.Logger,
	})
	b.m.SetServers(map[string]upstream.ServerConfig{b.id: {
		Transport: upstream.TransportStdio,
		Command:   cfg.Command,
		Args:      append([]string(nil), cfg.Args...),
		Cwd:       cfg.Cwd,
		Env:       env,
	}})

	info, err := b.m.Info(ctx, b.id)
	if err != nil {
		b.m.Close()
		return nil, fmt.Errorf("bridge: the stdio server did not start: %w", err)
	}
	b.info = info
	b.srv = newMirrorServer(b.id, info)
	if err := b.Refresh(ctx); err != nil {
		b.m.Close()
		return nil, fmt.Errorf("bridge: could not read the stdio server's lists: %w", err)
	}
	b.mcp = server.NewStreamableHTTPServer(b.srv, server.WithStreamableHTTPLogger(b.log))
	b.mux = http.NewServeMux()
	b.mux.Handle(cfg.Path, b.asSent(b.mcp))
	b.mux.HandleFunc("/health", b.serveHealth)

	b.ctx, b.cancel = context.WithCancel(context.Background())
	// The child's own list_changed: read the lists again now, and ask
	// for a sync of this server (Config.SyncTrigger).
	b.live = syncer.NewLive(b.log, func(ctx context.Context, _ string) error {
		if err := b.Refresh(ctx); err != nil {
			b.log.Warn("re-reading the lists after a list change failed", "error", err)
		}
		if cfg.SyncTrigger == nil {
			return nil
		}
		return cfg.SyncTrigger(ctx)
	})
	b.m.OnListChanged(func(_, method string) { b.live.Announce(b.ctx, b.id, method) })
	go b.loop()
	b.log.Info("bridge ready", "child", info.Name, "version", info.Version, "protocol", info.ProtocolVersion,
		"tools", b.mirror.tools.n, "prompts", b.mirror.prompts.n, "resources", b.mirror.resources.n, "templates", b.mirror.templates.n)
	return b, nil
}

func newMarker() string {
	var r [12]byte
	_, _ = rand.Read(r[:])
	return hex.EncodeToString(r[:])
}

// Handler returns the bridge's routes: MCP (Streamable HTTP, both the
// 2026-07-28 and the legacy protocol versions) at Config.Path and GET
// /health.
func (b *Bridge) Handler() http.Handler {
	if b.cfg.Token != "" {
		return tracing.Middleware(hopAuth(sha256.Sum256([]byte(b.cfg.Token)), b.mux))
	}
	return tracing.Middleware(b.mux)
}

// PIDs returns the process ids of the server processes alive now, sorted.
// It reads /proc, so it is empty where there is none (not Linux).
func (b *Bridge) PIDs() []int { return childPIDs(b.marker) }

// Drain makes /health answer 503 "draining" and ends the clients'
// listening streams (GET), so that an http.Server.Shutdown only waits for
// the requests in flight. Calls keep working until Close.
func (b *Bridge) Drain() {
	if !b.draining.Swap(true) {
		b.log.Info("draining: health reports 503 and listening streams are closed")
	}
	b.mcp.CloseSessions(context.Background())
}

// Close stops the refresher and every server process (with its process
// group) and waits for them. Calls still running fail.
func (b *Bridge) Close() error {
	b.closeOnce.Do(func() {
		b.draining.Store(true)
		b.cancel()
		<-b.loopDone
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = b.mcp.Shutdown(ctx)
		_ = b.m.Close()
		b.log.Info("bridge stopped")
	})
	return nil
}

// Serve serves the bridge on ln until ctx ends, then shuts down gracefully:
// Drain, wait at most drain for the requests in flight to finish (closing
// listening streams that open meanwhile), then Close. It returns nil after
// a graceful stop and the listener's error otherwise.
func (b *Bridge) Serve(ctx context.Context, ln net.Listener, drain time.Duration) error {
	hs := httpserve.New(b.Handler())
	hs.ErrorLog = slog.NewLogLogger(b.log.Handler(), slog.LevelWarn)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(httpserve.IdleUntilFirstByte(ln, hs.IdleTimeout)) }()
	b.log.Info("serving MCP over Streamable HTTP", "addr", ln.Addr().String(), "path", b.cfg.Path)

	select {
	case err := <-served:
		b.Close()
		return fmt.Errorf("bridge: serving on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	b.Drain()
	sctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(sctx) }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var err error
wait:
	for {
		select {
		case err = <-shut:
			break wait
		case <-tick.C:
			b.mcp.CloseSessions(sctx)
		}
	}
	if err != nil {
		b.log.Warn("requests still running after the drain timeout are cut off", "drain", drain)
		_ = hs.Close()
	}
	<-served
	b.Close()
	return nil
}
