// Package console serves the operator console: a small single-page app
// (static assets embedded in the binary, no CDN, a strict Content Security
// Policy) at /console, and the read-only JSON endpoints it reads under
// /tool-rag/admin/ (servers, catalog, search playground, usage), which are
// admin-only and meant to sit behind auth.Middleware.
//
// The app signs in with an admin API key (or an admin OAuth access token),
// keeps it in the tab's session storage, and sends it as a Bearer header on
// every request: no cookies, so the actions (sync now, reindex) are not
// exposed to cross-site request forgery.
package console

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolrag/mcp-gateway/internal/redact"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/metrics/usage"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
	"github.com/toolrag/mcp-gateway/pkg/vault"
)

//go:embed assets
var assets embed.FS

// Server is one upstream as the servers page shows it.
type Server struct {
	ID        string    `json:"id"`
	Transport string    `json:"transport"`
	Status    string    `json:"status"` // up, down, stale or degraded
	Reason    string    `json:"reason,omitempty"`
	LastSync  time.Time `json:"last_sync,omitzero"`
	Tools     int       `json:"tools"`
	Stale     int       `json:"stale_tools"`
	// Filled from the usage recorder.
	Calls     int64   `json:"calls"`
	Errors    int64   `json:"errors"`
	ErrorRate float64 `json:"error_rate"`
	P50ms     float64 `json:"p50_ms"`
	P99ms     float64 `json:"p99_ms"`
	// Connected counts the principals connected to a server whose auth
	// is per principal (nil for a static server). No grant is ever shown.
	Connected *int `json:"connected,omitempty"`
}

// Server statuses.
const (
	StatusUp       = "up"
	StatusDown     = "down"
	StatusStale    = "stale"
	StatusDegraded = "degraded"
)

// Source is what the console reads from the running gateway.
type Source interface {
	// Servers lists every configured upstream with its status (the
	// console adds the call statistics).
	Servers(ctx context.Context) ([]Server, error)
	// Tools lists the catalog.
	Tools(ctx context.Context) ([]catalog.Tool, error)
	// Keys lists the API keys (their hashes are never shown).
	Keys(ctx context.Context) ([]policy.Key, error)
}

// Connections is the gateway's per-principal upstream identity as the
// console reads and revokes it (pkg/upconnect).
type Connections interface {
	// Connections lists every principal's connections to server ("" for
	// every server): whose, what kind and since when; never a token.
	Connections(ctx context.Context, server string) ([]vault.Info, error)
	// Revoke removes principal's connection to server, or all of the
	// principal's connections when server is "", and returns how many.
	Revoke(ctx context.Context, principal, server string) (int, error)
}

// Retriever ranks tools: the same retriever /tool-rag/retrieve uses, so
// that the playground shows what a key would get.
type Retriever interface {
	Retrieve(ctx context.Context, req retrieve.Request) (retrieve.Response, error)
}

// Config configures the console.
type Config struct {
	// Path is where the app is served (default /console).
	Path string
	// AdminPrefix is where the JSON endpoints are served (default
	// /tool-rag/admin).
	AdminPrefix string
	Source      Source
	// Retrievers are the configured rankings by name; the first is the
	// default. With more than one, the playground compares two side by side.
	Retrievers []NamedRetriever
	Usage      *usage.Recorder
	// Sync runs "sync now" (nil: the action is not offered).
	Sync func(ctx context.Context) (any, error)
	// Poll is how often the servers page refreshes (default 5 s).
	Poll time.Duration
	// MaxTopK bounds a playground query's top_k (default 50).
	MaxTopK int
	// Tracing says the gateway records traces: call rows show their
	// trace id. TraceURL, when set, makes it a link: the address of a
	// trace in the trace viewer with {trace_id} in it.
	Tracing  bool
	TraceURL string
	// Connections, when set, lists and revokes the principals connected
	// to per-principal servers (nil: the gateway has no such server).
	Connections Connections
}

// NamedRetriever is one ranking the playground can use.
type NamedRetriever struct {
	Name      string
	Retriever Retriever
}

// Console serves the app and its JSON endpoints.
type Console struct {
	cfg    Config
	static fs.FS
}

// New returns the console.
func New(cfg Config) (*Console, error) {
	if cfg.Path == "" {
		cfg.Path = "/console"
	}
	if !strings.HasPrefix(cfg.Path, "/") || strings.HasSuffix(cfg.Path, "/") {
		return nil, fmt.Errorf("console path %q must start with / and not end with /", cfg.Path)
	}
	if cfg.AdminPrefix == "" {
		cfg.AdminPrefix = "/tool-rag/admin"
	}
	if cfg.Source == nil || len(cfg.Retrievers) == 0 {
		return nil, errors.New("console: Source and at least one retriever are required")
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 5 * time.Second
	}
	if cfg.MaxTopK <= 0 {
		cfg.MaxTopK = 50
	}
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	return &Console{cfg: cfg, static: sub}, nil
}

// Path is where the app is served.
func (c *Console) Path() string { return c.cfg.Path }

// AdminPrefix is where the JSON endpoints are served.
func (c *Console) AdminPrefix() string { return c.cfg.AdminPrefix }

// securityHeaders are set on every console response: scripts, styles and
// requests only from this origin, no framing, no inline script or style.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// App returns the handler of the static app under Path. It needs no
// authentication: the assets hold no data, every datum comes from the
// admin endpoints.
func (c *Console) App() http.Handler {
	files := http.FileServerFS(c.static)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w.Header())
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		rest, ok := strings.CutPrefix(r.URL.Path, c.cfg.Path)
		if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
			http.NotFound(w, r)
			return
		}
		switch rest {
		case "":
			http.Redirect(w, r, c.cfg.Path+"/", http.StatusMovedPermanently)
			return
		case "/config.json":
			w.Header().Set("Cache-Control", "no-store")
			writeJSON(w, http.StatusOK, map[string]any{
				"admin_prefix": c.cfg.AdminPrefix, "poll_ms": c.cfg.Poll.Milliseconds(),
				"sync": c.cfg.Sync != nil, "variants": c.variantNames(),
				"tracing": c.cfg.Tracing, "trace_url": c.cfg.TraceURL, "connections": c.cfg.Connections != nil,
			})
			return
		case "/":
			w.Header().Set("Cache-Control", "no-cache")
		default:
			w.Header().Set("Cache-Control", "no-cache")
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = path.Clean("/" + strings.TrimPrefix(rest, "/"))
		if strings.HasSuffix(rest, "/") {
			r2.URL.Path = "/"
		}
		files.ServeHTTP(w, r2)
	})
}

func (c *Console) variantNames() []string {
	names := make([]string, len(c.cfg.Retrievers))
	for i, r := range c.cfg.Retrievers {
		names[i] = r.Name
	}
	return names
}

// Admin returns the handler of the JSON endpoints under AdminPrefix. It
// expects the request's policy from auth.Middleware and answers 403 to any
// key that is not an admin.
func (c *Console) Admin() http.Handler {
	mux := http.NewServeMux()
	p := c.cfg.AdminPrefix
	mux.HandleFunc("GET "+p+"/whoami", c.whoami)
	mux.HandleFunc("GET "+p+"/servers", c.servers)
	mux.HandleFunc("GET "+p+"/tools", c.tools)
	mux.HandleFunc("GET "+p+"/tools/{id}", c.tool)
	mux.HandleFunc("GET "+p+"/keys", c.keys)
	mux.HandleFunc("POST "+p+"/search", c.search)
	mux.HandleFunc("GET "+p+"/usage", c.usage)
	mux.HandleFunc("GET "+p+"/overview", c.overview)
	mux.HandleFunc("POST "+p+"/sync", c.sync)
	mux.HandleFunc("GET "+p+"/connections", c.connections)
	mux.HandleFunc("DELETE "+p+"/connections", c.revoke)
	mux.HandleFunc(p+"/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no route %s %s; see %s/{whoami,overview,servers,tools,tools/{id},keys,search,usage,sync,connections}", r.Method, r.URL.Path, p))
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		pol, ok := policy.FromContext(r.Context())
		if !ok {
			writeError(w, http.StatusUnauthorized, "not authenticated")
			return
		}
		if !IsAdmin(pol) {
			writeError(w, http.StatusForbidden, "the console and /tool-rag/admin/ need an admin key")
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// IsAdmin reports whether a policy may use the admin endpoints: an admin
// key, or the unrestricted policy of a gateway running without auth.
func IsAdmin(p policy.Policy) bool {
	_, all := p.Servers()
	return p.Admin || all
}

func (c *Console) whoami(w http.ResponseWriter, r *http.Request) {
	pol, _ := policy.FromContext(r.Context())
	writeJSON(w, http.StatusOK, map[string]any{"key_id": pol.KeyID, "admin": true})
}

func (c *Console) servers(w http.ResponseWriter, r *http.Request) {
	list, err := c.cfg.Source.Servers(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "could not list the servers: "+err.Error())
		return
	}
	stats := map[string]usage.Summary{}
	for _, s := range c.cfg.Usage.Servers() {
		stats[s.ID] = s
	}
	counts := map[string]int{}
	for i := range list {
		s := &list[i]
		s.Reason = redact.Text(s.Reason) // an upstream's error text: no credentials, even for admins
		counts[s.Status]++
		if st, ok := stats[s.ID]; ok {
			s.Calls, s.Errors, s.ErrorRate, s.P50ms, s.P99ms = st.Calls, st.Errors, st.ErrorRate, st.P50ms, st.P99ms
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	writeJSON(w, http.StatusOK, map[string]any{"servers": list, "counts": counts, "as_of": time.Now().UTC()})
}

// ToolRow is one row of the catalog table.
type ToolRow struct {
	ID          string `json:"tool_id"`
	Server      string `json:"server_name"`
	Name        string `json:"tool_name"`
	Type        string `json:"tool_type"`
	Scope       string `json:"permission_scope"`
	Status      string `json:"status"`
	Description string `json:"description"`
}

const rowDescChars = 160

func (c *Console) tools(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	offset, err1 := intParam(q, "offset", 0, 0, 1<<30)
	limit, err2 := intParam(q, "limit", 100, 1, 500)
	if err := errors.Join(err1, err2); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	all, err := c.cfg.Source.Tools(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "could not list the catalog: "+err.Error())
		return
	}
	text := strings.ToLower(strings.TrimSpace(q.Get("q")))
	server, typ, status := q.Get("server"), q.Get("type"), q.Get("status")
	servers := map[string]bool{}
	var rows []ToolRow
	for _, t := range all {
		servers[t.Server] = true
		if (server != "" && t.Server != server) || (typ != "" && t.ToolType != typ) || (status != "" && t.Status != status) {
			continue
		}
		if text != "" && !strings.Contains(strings.ToLower(t.ID), text) && !strings.Contains(strings.ToLower(t.Description), text) {
			continue
		}
		rows = append(rows, ToolRow{ID: t.ID, Server: t.Server, Name: t.Name, Type: t.ToolType, Scope: t.PermissionScope,
			Status: t.Status, Description: t.Description})
	}
	total := len(rows)
	page := rows[min(offset, total):min(offset+limit, total)]
	for i := range page {
		page[i].Description = truncate(page[i].Description, rowDescChars)
	}
	ids := make([]string, 0, len(servers))
	for s := range servers {
		ids = append(ids, s)
	}
	sort.Strings(ids)
	writeJSON(w, http.StatusOK, map[string]any{"total": total, "catalog_size": len(all), "offset": offset, "limit": limit, "items": nonNil(page), "servers": ids})
}

func (c *Console) tool(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	all, err := c.cfg.Source.Tools(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "could not read the catalog: "+err.Error())
		return
	}
	for _, t := range all {
		if t.ID == id {
			writeJSON(w, http.StatusOK, t)
			return
		}
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("tool %q not found", id))
}

// KeyInfo is a key as the console shows it: never its hash.
type KeyInfo struct {
	ID        string           `json:"id"`
	Admin     bool             `json:"admin"`
	Servers   []string         `json:"servers"`
	RateLimit policy.RateLimit `json:"rate_limit,omitzero"`
	Disabled  bool             `json:"disabled,omitempty"`
}

func (c *Console) keys(w http.ResponseWriter, r *http.Request) {
	list, err := c.cfg.Source.Keys(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "could not list the keys: "+err.Error())
		return
	}
	out := make([]KeyInfo, 0, len(list))
	for _, k := range list {
		ids, _ := policy.For(k).Servers()
		sort.Strings(ids)
		out = append(out, KeyInfo{ID: k.ID, Admin: k.Admin, Servers: nonNil(ids), RateLimit: k.RateLimit, Disabled: k.Disabled})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	writeJSON(w, http.StatusOK, map[string]any{"keys": out})
}

// SearchRequest is the body of POST /tool-rag/admin/search.
type SearchRequest struct {
	Queries        []string `json:"queries"`
	KeyID          string   `json:"key_id,omitempty"` // default: the caller's own key
	TopK           int      `json:"top_k,omitempty"`  // default 5, as /tool-rag/retrieve
	AllowedServers []string `json:"allowed_servers,omitempty"`
	Variants       []string `json:"variants,omitempty"` // default: the first configured
}

// Hit is one ranked tool in the playground.
type Hit struct {
	Rank   int     `json:"rank"`
	ToolID string  `json:"tool_id"`
	Server string  `json:"server_name"`
	Name   string  `json:"tool_name"`
	Score  float64 `json:"score"`
	// Match is the result's confidence (strong, partial or weak).
	Match   string   `json:"match,omitempty"`
	Reason  string   `json:"reason"`
	Desc    string   `json:"description"`
	Related []string `json:"related,omitempty"`
}

// Group is the results of one query under one variant.
type Group struct {
	Query   string `json:"query"`
	Variant string `json:"variant"`
	Results []Hit  `json:"results"`
	Note    string `json:"note,omitempty"`
}

const maxQueries = 8

func (c *Console) search(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10+1))
	if err != nil || len(body) > 64<<10 {
		writeError(w, http.StatusRequestEntityTooLarge, "request body exceeds 64 KiB")
		return
	}
	var req SearchRequest
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "body must be {\"queries\": [\"...\"], \"key_id\"?, \"top_k\"?, \"allowed_servers\"?, \"variants\"?}: "+err.Error())
		return
	}
	var queries []string
	for _, q := range req.Queries {
		if q = strings.TrimSpace(q); q != "" {
			queries = append(queries, q)
		}
	}
	switch {
	case len(queries) == 0:
		writeError(w, http.StatusBadRequest, "field \"queries\" needs at least one non-empty query")
		return
	case len(queries) > maxQueries:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("field \"queries\" holds %d queries; the limit is %d", len(queries), maxQueries))
		return
	}
	for _, q := range queries {
		if utf8.RuneCountInString(q) > 2000 {
			writeError(w, http.StatusBadRequest, "a query is longer than 2000 characters")
			return
		}
	}
	if req.TopK == 0 {
		req.TopK = 5
	}
	if req.TopK < 1 || req.TopK > c.cfg.MaxTopK {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("field \"top_k\" must be between 1 and %d", c.cfg.MaxTopK))
		return
	}
	pol, _ := policy.FromContext(r.Context())
	if req.KeyID != "" && req.KeyID != pol.KeyID {
		keys, err := c.cfg.Source.Keys(r.Context())
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, "could not read the keys: "+err.Error())
			return
		}
		found := false
		for _, k := range keys {
			if k.ID == req.KeyID {
				pol, found = policy.For(k), true
				if k.Disabled {
					pol = policy.Policy{KeyID: k.ID}
				}
				break
			}
		}
		if !found {
			writeError(w, http.StatusNotFound, fmt.Sprintf("no key %q", req.KeyID))
			return
		}
	}
	narrowed := pol.Narrow(req.AllowedServers)
	var rets []NamedRetriever
	if len(req.Variants) == 0 {
		rets = c.cfg.Retrievers[:1]
	}
	for _, name := range req.Variants {
		found := false
		for _, nr := range c.cfg.Retrievers {
			if nr.Name == name {
				rets, found = append(rets, nr), true
			}
		}
		if !found {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("unknown variant %q (configured: %s)", name, strings.Join(c.variantNames(), ", ")))
			return
		}
	}
	var groups []Group
	for _, nr := range rets {
		for _, q := range queries {
			resp, err := nr.Retriever.Retrieve(r.Context(), retrieve.Request{Query: q, TopK: req.TopK, Policy: narrowed})
			if err != nil {
				writeError(w, http.StatusInternalServerError, "retrieve failed: "+err.Error())
				return
			}
			g := Group{Query: q, Variant: nr.Name, Results: []Hit{}}
			for i, res := range resp.Results {
				g.Results = append(g.Results, Hit{Rank: i + 1, ToolID: res.Tool.ID, Server: res.Tool.Server, Name: res.Tool.Name,
					Score: res.Score, Match: res.Match, Reason: res.Reason, Desc: truncate(res.Tool.Description, rowDescChars), Related: res.Related})
			}
			if len(g.Results) == 0 {
				g.Note = narrowed.NoGrant()
				if resp.Loading {
					g.Note = "the catalog is still loading"
				}
			}
			groups = append(groups, g)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"key_id": pol.KeyID, "top_k": req.TopK, "groups": groups})
}

func (c *Console) usage(w http.ResponseWriter, r *http.Request) {
	buckets, p50, p99 := c.cfg.Usage.Latency()
	writeJSON(w, http.StatusOK, map[string]any{
		"since": c.cfg.Usage.Started(), "keys": nonNil(c.cfg.Usage.Keys()),
		"latency":      map[string]any{"buckets": nonNil(buckets), "p50_ms": p50, "p99_ms": p99},
		"timeline":     c.cfg.Usage.Timeline(),
		"retrievals":   c.cfg.Usage.Retrievals(),
		"recent_calls": nonNil(recentCalls(c.cfg.Usage)),
	})
}

// recentCalls are the latest tool calls, newest first.
func recentCalls(u *usage.Recorder) []usage.Call {
	calls, _ := u.Recent()
	return calls
}

// recentServerErrors is how many servers with a reason the overview lists.
const recentServerErrors = 10

// overview is the first page: what is connected, the catalog and its last
// sync, the recent calls and errors, and how well retrievals match.
func (c *Console) overview(w http.ResponseWriter, r *http.Request) {
	list, err := c.cfg.Source.Servers(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "could not list the servers: "+err.Error())
		return
	}
	tools, err := c.cfg.Source.Tools(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "could not list the catalog: "+err.Error())
		return
	}
	counts := map[string]int{}
	var lastSync time.Time
	type problem struct {
		Server string `json:"server"`
		Status string `json:"status"`
		Reason string `json:"reason"`
	}
	problems := []problem{}
	for i := range list {
		s := &list[i]
		s.Reason = redact.Text(s.Reason)
		counts[s.Status]++
		if s.LastSync.After(lastSync) {
			lastSync = s.LastSync
		}
		if s.Status != StatusUp && len(problems) < recentServerErrors {
			problems = append(problems, problem{s.ID, s.Status, s.Reason})
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	calls, errs := c.cfg.Usage.Recent()
	var total, failed int64
	for _, k := range c.cfg.Usage.Keys() {
		total, failed = total+k.Calls, failed+k.Errors
	}
	_, p50, p99 := c.cfg.Usage.Latency()
	writeJSON(w, http.StatusOK, map[string]any{
		"calls":    map[string]any{"calls": total, "errors": failed, "p50_ms": p50, "p99_ms": p99},
		"timeline": c.cfg.Usage.Timeline(),
		"servers":  list, "counts": counts, "tools": len(tools), "last_sync": lastSync,
		"recent_calls": nonNil(calls), "recent_errors": nonNil(errs), "server_problems": problems,
		"retrievals": c.cfg.Usage.Retrievals(), "since": c.cfg.Usage.Started(), "sync": c.cfg.Sync != nil,
	})
}

func (c *Console) sync(w http.ResponseWriter, r *http.Request) {
	if c.cfg.Sync == nil {
		writeError(w, http.StatusNotImplemented, "sync is not available in this deployment")
		return
	}
	status, err := c.cfg.Sync(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "sync failed: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": status, "summary": SyncSummary(status)})
}

// connections lists the principals connected to ?server= (every
// per-principal server without it), never a token.
func (c *Console) connections(w http.ResponseWriter, r *http.Request) {
	if c.cfg.Connections == nil {
		writeError(w, http.StatusNotImplemented, "this gateway has no server whose auth is per principal")
		return
	}
	server := r.URL.Query().Get("server")
	list, err := c.cfg.Connections.Connections(r.Context(), server)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "could not list the connections: "+err.Error())
		return
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].KeyID != list[j].KeyID {
			return list[i].KeyID < list[j].KeyID
		}
		return list[i].Principal+list[i].Server < list[j].Principal+list[j].Server
	})
	// vault.Info leaves the principal out of its JSON (a user's own
	// connections page); the console shows it, to revoke by it.
	type connection struct {
		vault.Info
		Principal string `json:"principal"`
	}
	out := make([]connection, len(list))
	for i, in := range list {
		out[i] = connection{in, in.Principal}
	}
	writeJSON(w, http.StatusOK, map[string]any{"server": server, "connections": out})
}

// revoke removes ?principal='s connection to ?server=, or all of the
// principal's connections without server.
func (c *Console) revoke(w http.ResponseWriter, r *http.Request) {
	if c.cfg.Connections == nil {
		writeError(w, http.StatusNotImplemented, "this gateway has no server whose auth is per principal")
		return
	}
	q := r.URL.Query()
	principal, server := q.Get("principal"), q.Get("server")
	if principal == "" {
		writeError(w, http.StatusBadRequest, "parameter \"principal\" is required (and \"server\" to revoke one connection only)")
		return
	}
	n, err := c.cfg.Connections.Revoke(r.Context(), principal, server)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "could not revoke the connections: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"principal": principal, "server": server, "revoked": n})
}

// SyncSummary words a sync result for people: "Synced 2 of 3 servers in
// 1.2 s; 5 tools changed, 1 removed. Not reached: web (connection
// refused)." A result of another shape (the AWS runtime's reindex
// status) is listed as its fields.
func SyncSummary(status any) string {
	b, err := json.Marshal(status)
	if err != nil {
		return "Sync done."
	}
	var rep struct {
		Servers  *int              `json:"servers"`
		Synced   int               `json:"synced"`
		Stale    map[string]string `json:"stale"`
		Degraded map[string]string `json:"degraded"`
		Refused  map[string]string `json:"refused"`
		Removed  []string          `json:"removed"`
		Changed  int               `json:"changed"`
		Deleted  int               `json:"deleted"`
		Duration time.Duration     `json:"duration_ns"`
	}
	if json.Unmarshal(b, &rep) != nil || rep.Servers == nil {
		var fields map[string]any
		if json.Unmarshal(b, &fields) != nil || len(fields) == 0 {
			var s string
			if json.Unmarshal(b, &s) == nil && s != "" {
				return "Done: " + s + "."
			}
			return "Done."
		}
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			v := fields[k]
			if f, ok := v.(float64); ok && strings.HasSuffix(k, "_ns") {
				k, v = strings.TrimSuffix(k, "_ns"), roundDuration(time.Duration(f))
			}
			parts = append(parts, fmt.Sprintf("%s %v", strings.ReplaceAll(k, "_", " "), v))
		}
		return "Done: " + strings.Join(parts, ", ") + "."
	}
	var b2 strings.Builder
	fmt.Fprintf(&b2, "Synced %d of %s in %s; %s changed, %s removed.", rep.Synced, plural(*rep.Servers, "server"),
		roundDuration(rep.Duration), plural(rep.Changed, "tool"), plural(rep.Deleted, "tool"))
	for _, part := range []struct {
		label string
		m     map[string]string
	}{{"Not reached (their tools are kept, marked stale)", rep.Stale}, {"Over the limits (only the first tools are served)", rep.Degraded}, {"Refused", rep.Refused}} {
		if len(part.m) == 0 {
			continue
		}
		ids := make([]string, 0, len(part.m))
		for id := range part.m {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for i, id := range ids {
			ids[i] = id + " (" + truncate(redact.Text(part.m[id]), 120) + ")"
		}
		fmt.Fprintf(&b2, " %s: %s.", part.label, strings.Join(ids, "; "))
	}
	if len(rep.Removed) > 0 {
		fmt.Fprintf(&b2, " No longer in the registry: %s.", strings.Join(rep.Removed, ", "))
	}
	return b2.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// roundDuration prints d to a precision a person reads: 850 ms, 1.2 s, 2m5s.
func roundDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	default:
		return d.Round(time.Second).String()
	}
}

func intParam(q url.Values, name string, def, lo, hi int) (int, error) {
	s := q.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("parameter %q must be an integer between %d and %d", name, lo, hi)
	}
	return n, nil
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // served as application/json with nosniff; the app inserts text, never HTML
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": msg})
}
