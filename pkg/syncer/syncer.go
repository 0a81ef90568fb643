// Package syncer pulls tool lists from every upstream and reconciles the
// catalog store: changed tools are written, servers removed from the
// registry are purged, and the tools of an unreachable server are kept and
// marked stale — never deleted.
package syncer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolrag/mcp-gateway/internal/mcpfix"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
	"go.opentelemetry.io/otel/attribute"
)

// Upstreams lists what the registered servers offer (upstream.Manager).
type Upstreams interface {
	Servers() []string
	Info(ctx context.Context, id string) (upstream.ServerInfo, error)
	ListTools(ctx context.Context, id string) ([]mcp.Tool, error)
}

// Config configures a sync run.
type Config struct {
	Upstreams Upstreams
	Store     catalog.Store
	Parallel  int           // servers listed at once, default 16
	Timeout   time.Duration // per server, default 30s
	// MaxTools bounds the tools kept per server (default 2,000, as
	// upstream.DefaultMaxListTools); a server over it is reported in
	// Report.Degraded and only its first MaxTools tools are kept.
	MaxTools int
	Logger   *slog.Logger
	Now      func() time.Time
	// Servers, when set, syncs only these registered servers (one that
	// announced a change of its lists) and purges nothing; ids that are not
	// registered are skipped.
	Servers []string
}

// Report says what a sync changed.
type Report struct {
	Servers int               `json:"servers"`
	Synced  int               `json:"synced"`
	Stale   map[string]string `json:"stale,omitempty"` // server → error
	// Degraded servers synced, but not all of their tools are served:
	// their tools/list went over the gateway's limits (server → reason).
	Degraded map[string]string `json:"degraded,omitempty"`
	// Refused names, per server, what the sync would not store: a server
	// whose id is invalid, or tools whose names are invalid, whose id would
	// not split back into the same (server, name), or whose id another
	// server's tool already has.
	Refused  map[string]string `json:"refused,omitempty"`
	Removed  []string          `json:"removed,omitempty"`
	Changed  int               `json:"changed"`
	Deleted  int               `json:"deleted"`
	Duration time.Duration     `json:"duration_ns"`
}

// Run syncs every registered server once. It fails only when the store
// fails; unreachable upstreams are reported in Report.Stale.
func Run(ctx context.Context, cfg Config) (rep Report, err error) {
	ctx, span := tracing.Start(ctx, "sync")
	defer func() {
		if span.IsRecording() {
			span.SetAttributes(attribute.Int("toolrag.sync.servers", rep.Servers), attribute.Int("toolrag.sync.synced", rep.Synced),
				attribute.Int("toolrag.sync.stale", len(rep.Stale)), attribute.Int("toolrag.sync.changed", rep.Changed),
				attribute.Int("toolrag.sync.deleted", rep.Deleted))
		}
		tracing.End(span, err)
	}()
	return run(ctx, cfg)
}

func run(ctx context.Context, cfg Config) (Report, error) {
	if cfg.Parallel <= 0 {
		cfg.Parallel = 16
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxTools <= 0 {
		cfg.MaxTools = upstream.DefaultMaxListTools
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	start := time.Now()
	servers := cfg.Upstreams.Servers()
	if cfg.Servers != nil {
		return runSome(ctx, cfg, servers)
	}
	rep := Report{Servers: len(servers), Stale: map[string]string{}, Degraded: map[string]string{}, Refused: map[string]string{}}

	// Purge servers that left the registry first.
	known, err := cfg.Store.ListServers(ctx)
	if err != nil {
		return rep, fmt.Errorf("sync: list stored servers: %w", err)
	}
	registered := map[string]bool{}
	for _, s := range servers {
		registered[s] = true
	}
	for _, s := range known {
		if !registered[s.ID] {
			if err := cfg.Store.DeleteServer(ctx, s.ID); err != nil {
				return rep, fmt.Errorf("sync: remove server %q: %w", s.ID, err)
			}
			rep.Removed = append(rep.Removed, s.ID)
			cfg.Logger.Info("removed server no longer in the registry", "server", s.ID)
		}
	}

	return syncServers(ctx, cfg, servers, rep, start)
}

// runSome syncs the registered servers among cfg.Servers.
func runSome(ctx context.Context, cfg Config, registered []string) (Report, error) {
	start := time.Now()
	reg := map[string]bool{}
	for _, s := range registered {
		reg[s] = true
	}
	var servers []string
	for _, s := range cfg.Servers {
		if reg[s] {
			servers = append(servers, s)
			reg[s] = false // once
		}
	}
	rep := Report{Servers: len(servers), Stale: map[string]string{}, Degraded: map[string]string{}, Refused: map[string]string{}}
	// Tool ids claimed by the other servers stay theirs.
	claimed, err := cfg.Store.ListTools(ctx)
	if err != nil {
		return rep, fmt.Errorf("sync: list stored tools: %w", err)
	}
	return syncServersClaimed(ctx, cfg, servers, rep, start, claimed)
}

func syncServers(ctx context.Context, cfg Config, servers []string, rep Report, start time.Time) (Report, error) {
	return syncServersClaimed(ctx, cfg, servers, rep, start, nil)
}

func syncServersClaimed(ctx context.Context, cfg Config, servers []string, rep Report, start time.Time, others []catalog.Tool) (Report, error) {
	var (
		mu       sync.Mutex
		done     atomic.Int64
		storeErr error
		wg       sync.WaitGroup
		claims   = &idClaims{owner: map[string]string{}}
	)
	syncing := map[string]bool{}
	for _, s := range servers {
		syncing[s] = true
	}
	for _, t := range others {
		if !syncing[t.Server] {
			claims.owner[t.ID] = t.Server
		}
	}
	sem := make(chan struct{}, cfg.Parallel)
	for _, id := range servers {
		if err := catalog.ValidServerID(id); err != nil {
			rep.Refused[id] = err.Error()
			cfg.Logger.Error("sync refused a server: its id is invalid; fix the registry", "server", id, "error", err)
			done.Add(1)
			continue
		}
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			srv, tools, listErr := fetch(ctx, cfg, id)
			if ctx.Err() != nil {
				return // interrupted: a listing cut short says nothing about the server
			}
			var degraded, refused string
			if errors.Is(listErr, upstream.ErrListTruncated) {
				degraded, listErr = listErr.Error(), nil
			}
			if len(tools) > cfg.MaxTools {
				degraded = fmt.Sprintf("server %q lists %d tools, more than the limit of %d (TOOL_RAG_MAX_TOOLS_PER_SERVER); only the first %d are served", id, len(tools), cfg.MaxTools, cfg.MaxTools)
				tools = tools[:cfg.MaxTools]
			}
			if listErr == nil {
				tools, refused = checkTools(id, tools, claims)
			}
			var changed, deleted []string
			var err error
			if listErr != nil {
				err = cfg.Store.MarkServerStale(ctx, id, listErr.Error())
			} else {
				changed, deleted, err = cfg.Store.ReplaceServerTools(ctx, srv, tools)
			}
			n := done.Add(1)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				storeErr = errors.Join(storeErr, fmt.Errorf("server %q: %w", id, err))
			}
			if degraded != "" {
				rep.Degraded[id] = degraded
				cfg.Logger.Warn("upstream degraded: its tool list is over the gateway's limits", "server", id, "reason", degraded)
			}
			if refused != "" {
				rep.Refused[id] = refused
				cfg.Logger.Warn("sync refused tools of an upstream", "server", id, "reason", refused)
			}
			if listErr != nil {
				rep.Stale[id] = listErr.Error()
				cfg.Logger.Warn("upstream unreachable; keeping its tools as stale", "server", id, "error", listErr)
			} else if err == nil {
				rep.Synced++
				rep.Changed += len(changed)
				rep.Deleted += len(deleted)
			}
			if step := int64(max(1, len(servers)/10)); n == int64(len(servers)) || n%step == 0 {
				cfg.Logger.Info(fmt.Sprintf("sync progress: %d/%d servers done", n, len(servers)), "synced", rep.Synced, "unreachable", len(rep.Stale))
			}
		}(id)
	}
	wg.Wait()
	sort.Strings(rep.Removed)
	rep.Duration = time.Since(start)
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("sync interrupted after %d of %d servers: %w", done.Load(), len(servers), err)
	}
	if storeErr != nil {
		return rep, fmt.Errorf("sync: store: %w", storeErr)
	}
	return rep, nil
}

// idClaims records which server each tool id of this sync belongs to.
type idClaims struct {
	mu    sync.Mutex
	owner map[string]string // tool id → server
}

// mcpToolName reports whether name follows the MCP tool name rules: 1 to
// 128 characters, each A-Z, a-z, 0-9, "_", "-" or ".". A name outside them
// (spaces, "<", quotes, "/", non-ASCII) is refused at sync: it would reach
// clients' prompts and user interfaces as written.
func mcpToolName(name string) bool {
	if len(name) == 0 || len(name) > 128 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// quoteShort quotes name for a report: ASCII only, at most 64 bytes of it.
func quoteShort(name string) string {
	if len(name) > 64 {
		return strconv.QuoteToASCII(name[:64]) + "…"
	}
	return strconv.QuoteToASCII(name)
}

// checkTools keeps the tools of server whose identity is exact: a valid
// name (MCP tool name rules), an id that splits back into the same (server, name), and an id no
// other server's tool has claimed in this sync. It returns the kept tools
// and a summary of the refused ones ("" when none).
func checkTools(server string, tools []catalog.Tool, claims *idClaims) ([]catalog.Tool, string) {
	kept := tools[:0:0]
	var refused []string
	claims.mu.Lock()
	defer claims.mu.Unlock()
	for _, t := range tools {
		if err := policy.CheckName("tool", t.Name); err != nil {
			refused = append(refused, err.Error())
			continue
		}
		if !mcpToolName(t.Name) {
			refused = append(refused, fmt.Sprintf("tool %s: the name breaks the MCP tool name rules (1 to 128 of A-Z, a-z, 0-9, _, - and .)", quoteShort(t.Name)))
			continue
		}
		if s, n, ok := catalog.SplitToolID(t.ID); !ok || s != server || n != t.Name || t.Server != server {
			refused = append(refused, fmt.Sprintf("tool %q: its id %q would not split back into server %q and tool %q", t.Name, t.ID, server, t.Name))
			continue
		}
		if other, taken := claims.owner[t.ID]; taken && other != server {
			refused = append(refused, fmt.Sprintf("tool %q: its id %q is also the id of a tool of server %q", t.Name, t.ID, other))
			continue
		}
		claims.owner[t.ID] = server
		kept = append(kept, t)
	}
	if len(refused) == 0 {
		return kept, ""
	}
	msg := fmt.Sprintf("%d tool(s) refused: %s", len(refused), strings.Join(refused[:min(len(refused), 5)], "; "))
	if len(refused) > 5 {
		msg += fmt.Sprintf("; and %d more", len(refused)-5)
	}
	return kept, msg
}

func fetch(ctx context.Context, cfg Config, id string) (_ catalog.Server, tools []catalog.Tool, err error) {
	ctx, span := tracing.Start(ctx, "sync server")
	defer func() {
		if span.IsRecording() {
			span.SetAttributes(attribute.String("toolrag.upstream.server", id), attribute.Int("toolrag.sync.tools", len(tools)))
		}
		tracing.End(span, err)
	}()
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	now := cfg.Now().UTC()
	srv := catalog.Server{ID: id, Status: catalog.StatusActive, SyncedAt: now}
	if info, err := cfg.Upstreams.Info(ctx, id); err == nil {
		srv.Title = info.Title
		if srv.Title == "" {
			srv.Title = info.Name
		}
		srv.Description = info.Instructions
		srv.Extra = ServerExtra(info)
	} else {
		return srv, nil, err
	}
	ctx, raws := mcpfix.WithRawResults(ctx)
	list, err := cfg.Upstreams.ListTools(ctx, id)
	raw := raws.Tools()
	if err != nil && !errors.Is(err, upstream.ErrListTruncated) {
		return srv, nil, err
	}
	tools = make([]catalog.Tool, 0, len(list))
	seen := map[string]bool{}
	for _, t := range list {
		if t.Name == "" || seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		rec := FromMCP(id, t, now)
		if r, ok := raw[t.Name]; ok {
			rec = FromRaw(rec, r)
		}
		tools = append(tools, rec)
	}
	return srv, tools, err // err is nil or ErrListTruncated
}

// FromMCP converts an upstream tool definition to a catalog record.
func FromMCP(server string, t mcp.Tool, now time.Time) catalog.Tool {
	rec := catalog.Tool{Server: server, Name: t.Name, Title: t.Title, Description: t.Description, UpdatedAt: now}
	if b, err := json.Marshal(t); err == nil {
		var parts struct {
			InputSchema json.RawMessage `json:"inputSchema"`
			Annotations json.RawMessage `json:"annotations"`
		}
		if json.Unmarshal(b, &parts) == nil {
			rec.InputSchema = parts.InputSchema
			if len(parts.Annotations) > 0 && string(parts.Annotations) != "{}" && string(parts.Annotations) != "null" {
				rec.Annotations = parts.Annotations
			}
		}
	}
	if rec.Title == "" && t.Annotations.Title != "" {
		rec.Title = t.Annotations.Title
	}
	catalog.Finalize(&rec)
	return rec
}

// ServerExtra is what a server said about itself at initialize, kept whole
// in catalog.Server.Extra.
func ServerExtra(info upstream.ServerInfo) json.RawMessage {
	if info.Implementation.Name == "" && info.Instructions == "" {
		return nil
	}
	b, err := json.Marshal(struct {
		ServerInfo   mcp.Implementation `json:"serverInfo"`
		Instructions string             `json:"instructions,omitempty"`
	}{info.Implementation, info.Instructions})
	if err != nil {
		return nil
	}
	return b
}

// heldFields are the fields of an upstream tool that catalog.Tool holds in
// fields of their own; every other field goes to Extra.
// (title stays in Extra too: the catalog's Title falls back to
// annotations.title, which clients must not receive as a title the
// upstream never sent.)
var heldFields = map[string]bool{"name": true, "description": true, "inputSchema": true, "annotations": true}

// FromRaw completes rec, made by FromMCP from the decoded tool, with the
// tool as the server sent it: the input schema and annotations exactly as
// sent (mcp-go's decoding rewrites schemas and drops unknown annotation
// fields), and every other field (outputSchema, icons, _meta, execution,
// fields of later protocol versions) in Extra. A tool that is not a JSON
// object leaves rec as it was.
func FromRaw(rec catalog.Tool, raw json.RawMessage) catalog.Tool {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return rec
	}
	if v, ok := fields["inputSchema"]; ok && isObject(v) {
		rec.InputSchema = compact(v)
	}
	if v, ok := fields["annotations"]; ok && isObject(v) && string(compact(v)) != "{}" {
		rec.Annotations = compact(v)
	}
	extra := map[string]json.RawMessage{}
	for k, v := range fields {
		if !heldFields[k] {
			extra[k] = v
		}
	}
	rec.Extra = json.RawMessage(`{}`) // never empty: the tool as sent is known
	if len(extra) > 0 {
		if b, err := json.Marshal(extra); err == nil {
			rec.Extra = b
		}
	}
	rec.ContentHash = ""
	catalog.Finalize(&rec)
	return rec
}

func isObject(v json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(v, &m) == nil && m != nil
}

func compact(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}
