// Package ragapi serves the Tool-RAG REST API for frameworks:
// POST /tool-rag/retrieve, GET /tool-rag/tool/{id}, POST /tool-rag/reindex,
// GET /tool-rag/health and GET /tool-rag/metrics. Every route except health
// is expected behind auth.Middleware and is scoped by the caller's policy.
package ragapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolrag/mcp-gateway/internal/redact"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/httpserve"
	"github.com/toolrag/mcp-gateway/pkg/metrics"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// Retriever ranks tools.
type Retriever interface {
	Retrieve(ctx context.Context, req retrieve.Request) (retrieve.Response, error)
}

// Tools looks up one catalog record.
type Tools interface {
	GetTool(ctx context.Context, id string) (catalog.Tool, error)
}

// Reindexer rebuilds the index ("full" or "incremental"); it returns a
// JSON-able status (e.g. counts, or "triggered asynchronously").
type Reindexer interface {
	Reindex(ctx context.Context, mode string) (any, error)
}

// Config configures the API.
type Config struct {
	Prefix    string // default /tool-rag
	Retriever Retriever
	Tools     Tools
	Reindexer Reindexer
	Health    func(ctx context.Context) map[string]any // extra fields for /health (admin keys only)
	// ServerUp reports each configured upstream server and whether it is
	// up; a non-admin key's /health counts the servers it is granted.
	ServerUp      func() map[string]bool
	Metrics       *metrics.Registry
	MaxTopK       int   // default 50
	MaxQueryChars int   // default 2000
	MaxBodyBytes  int64 // default 1 MiB
}

// API is the REST handler.
type API struct {
	cfg     Config
	started time.Time
}

// New returns the API.
func New(cfg Config) *API {
	if cfg.Prefix == "" {
		cfg.Prefix = "/tool-rag"
	}
	if cfg.MaxTopK <= 0 {
		cfg.MaxTopK = 50
	}
	if cfg.MaxQueryChars <= 0 {
		cfg.MaxQueryChars = 2000
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.New()
	}
	return &API{cfg: cfg, started: time.Now().UTC()}
}

// Handler returns the routes under the prefix.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	p := a.cfg.Prefix
	mux.Handle("POST "+p+"/retrieve", a.timed("retrieve", a.retrieve))
	mux.Handle("GET "+p+"/tool/{id}", a.timed("tool", a.tool))
	mux.Handle("POST "+p+"/reindex", a.timed("reindex", a.reindex))
	mux.Handle("GET "+p+"/health", a.timed("health", a.health))
	mux.Handle("GET "+p+"/metrics", a.timed("metrics", a.metrics))
	mux.HandleFunc(p+"/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no route %s %s; see /tool-rag/{retrieve,tool/{id},reindex,health,metrics}", r.Method, r.URL.Path))
	})
	return mux
}

func (a *API) timed(route string, h func(w http.ResponseWriter, r *http.Request) int) http.Handler {
	hist := a.cfg.Metrics.Histogram("toolrag_http_request_duration_seconds", "route="+route)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		code := h(w, r)
		hist.Observe(time.Since(start))
		a.cfg.Metrics.Counter("toolrag_http_requests_total", "route="+route, fmt.Sprintf("code=%d", code)).Add(1)
	})
}

// RetrieveRequest is the body of POST /tool-rag/retrieve.
type RetrieveRequest struct {
	Query string `json:"query"`
	// Queries asks for several capabilities at once (1 to
	// retrieve.MaxQueries); the answer is grouped per query.
	Queries         []string `json:"queries,omitempty"`
	TopK            *int     `json:"top_k,omitempty"`
	AllowedServers  []string `json:"allowed_servers,omitempty"`
	PermissionScope string   `json:"permission_scope,omitempty"`
	ToolType        string   `json:"tool_type,omitempty"`
	IncludeSchema   *bool    `json:"include_schema,omitempty"`
}

// ResultItem is one tool in a retrieve response.
type ResultItem struct {
	ToolID      string          `json:"tool_id"`
	ToolName    string          `json:"tool_name"`
	ServerName  string          `json:"server_name"`
	Score       float64         `json:"score"`
	Reason      string          `json:"reason"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	Status      string          `json:"status"`
	ToolType    string          `json:"tool_type"`
	Match       string          `json:"match,omitempty"`
	Related     []string        `json:"related,omitempty"`
}

// ResultGroup is the answer to one of the queries of a grouped request.
type ResultGroup struct {
	Query   string       `json:"query"`
	Results []ResultItem `json:"results"`
	Hint    string       `json:"hint,omitempty"`
}

// DecodeRetrieveRequest parses and validates a retrieve body. Errors name
// the offending field.
func DecodeRetrieveRequest(body []byte, maxTopK, maxQueryChars int) (RetrieveRequest, error) {
	var req RetrieveRequest
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typeErr) && typeErr.Field == "":
			return req, errors.New("request body must be a JSON object like {\"query\": \"...\"}")
		case errors.As(err, &typeErr):
			return req, fmt.Errorf("field %q must be %s", typeErr.Field, jsonKind(typeErr.Type.String()))
		case strings.HasPrefix(err.Error(), "json: unknown field"):
			return req, fmt.Errorf("unknown field %s (known: query, queries, top_k, allowed_servers, permission_scope, tool_type, include_schema)", strings.TrimPrefix(err.Error(), "json: unknown field "))
		case errors.Is(err, io.EOF):
			return req, errors.New("request body is empty; send {\"query\": \"...\"}")
		default:
			return req, fmt.Errorf("request body is not valid JSON: %v", err)
		}
	}
	// Anything but the end of input after the object is rejected (dec.More
	// alone would accept a stray "]" or "}").
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return req, errors.New("request body has data after the JSON object")
	}
	if req.Queries != nil {
		if len(req.Queries) == 0 {
			return req, fmt.Errorf("field \"queries\" must hold 1 to %d queries (one capability each)", retrieve.MaxQueries)
		}
		for i, q := range req.Queries {
			if strings.TrimSpace(q) == "" {
				return req, fmt.Errorf("field \"queries\"[%d] must not be empty", i)
			}
			if n := utf8.RuneCountInString(q); n > maxQueryChars {
				return req, fmt.Errorf("field \"queries\"[%d] is %d characters; the limit is %d", i, n, maxQueryChars)
			}
		}
		if strings.TrimSpace(req.Query) != "" {
			if n := utf8.RuneCountInString(req.Query); n > maxQueryChars {
				return req, fmt.Errorf("field \"query\" is %d characters; the limit is %d", n, maxQueryChars)
			}
		}
		// "query" and "queries" together, as find_tools takes them: the
		// query first, a query repeated (case and spacing aside) once.
		both := strings.TrimSpace(req.Query) != ""
		req.Queries, req.Query = mergeQueries(req.Query, req.Queries), ""
		if len(req.Queries) > retrieve.MaxQueries && !both {
			return req, fmt.Errorf("field \"queries\" must hold 1 to %d queries (one capability each)", retrieve.MaxQueries)
		}
		if len(req.Queries) > retrieve.MaxQueries {
			return req, fmt.Errorf("fields \"query\" and \"queries\" hold %d different queries; the limit is %d (one capability each)", len(req.Queries), retrieve.MaxQueries)
		}
		total := 0
		for _, q := range req.Queries {
			total += utf8.RuneCountInString(q)
		}
		if len(req.Queries) > 1 && total > retrieve.MaxTotalQueryChars {
			return req, fmt.Errorf("field \"queries\" holds %d characters in all; the limit is %d (one short capability per query)", total, retrieve.MaxTotalQueryChars)
		}
	} else {
		if strings.TrimSpace(req.Query) == "" {
			return req, errors.New("field \"query\" is required (or \"queries\") and must not be empty")
		}
		if n := utf8.RuneCountInString(req.Query); n > maxQueryChars {
			return req, fmt.Errorf("field \"query\" is %d characters; the limit is %d", n, maxQueryChars)
		}
	}
	if req.TopK != nil && (*req.TopK < 1 || *req.TopK > maxTopK) {
		return req, fmt.Errorf("field \"top_k\" must be between 1 and %d", maxTopK)
	}
	for _, s := range req.AllowedServers {
		if err := catalog.ValidServerID(s); err != nil {
			return req, fmt.Errorf("field \"allowed_servers\": %v", err)
		}
	}
	switch req.PermissionScope {
	case "", catalog.ScopeRead, catalog.ScopeWrite, catalog.ScopeDestructive:
	default:
		return req, fmt.Errorf("field \"permission_scope\" must be one of read, write, destructive")
	}
	switch req.ToolType {
	case "", catalog.TypeQuery, catalog.TypeAction, catalog.TypeTransform:
	default:
		return req, fmt.Errorf("field \"tool_type\" must be one of query, action, transform")
	}
	return req, nil
}

// mergeQueries puts query (when not blank) before queries and drops the
// queries that repeat an earlier one, ignoring case and spacing.
func mergeQueries(query string, queries []string) []string {
	all := queries
	if strings.TrimSpace(query) != "" {
		all = append([]string{query}, queries...)
	}
	out := make([]string, 0, len(all))
	seen := make(map[string]bool, len(all))
	for _, q := range all {
		key := strings.ToLower(strings.Join(strings.Fields(q), " "))
		if !seen[key] {
			seen[key] = true
			out = append(out, q)
		}
	}
	return out
}

func jsonKind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case goType == "string":
		return "a string"
	case goType == "int", goType == "*int":
		return "an integer"
	case goType == "bool", goType == "*bool":
		return "true or false"
	}
	return "of type " + goType
}

func (a *API) retrieve(w http.ResponseWriter, r *http.Request) int {
	pol, ok := policy.FromContext(r.Context())
	if !ok {
		return writeError(w, http.StatusUnauthorized, "not authenticated")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, a.cfg.MaxBodyBytes+1))
	if err != nil {
		return writeError(w, http.StatusBadRequest, "could not read the request body: "+err.Error())
	}
	if int64(len(body)) > a.cfg.MaxBodyBytes {
		httpserve.DiscardRest(w, r)
		return writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds the limit of %d bytes (MCP_GATEWAY_MAX_BODY_BYTES)", a.cfg.MaxBodyBytes))
	}
	req, err := DecodeRetrieveRequest(body, a.cfg.MaxTopK, a.cfg.MaxQueryChars)
	if err != nil {
		return writeError(w, http.StatusBadRequest, err.Error())
	}
	topK := 5
	if req.TopK != nil {
		topK = *req.TopK
	}
	includeSchema := req.IncludeSchema == nil || *req.IncludeSchema
	narrowed := pol.Narrow(req.AllowedServers)
	if req.Queries != nil {
		return a.retrieveGroups(w, r, req, narrowed, topK, includeSchema)
	}
	resp, err := a.cfg.Retriever.Retrieve(r.Context(), retrieve.Request{
		Query: req.Query, TopK: topK, Policy: narrowed,
		ToolType: req.ToolType, PermissionScope: req.PermissionScope,
	})
	if err != nil {
		return writeError(w, http.StatusInternalServerError, "retrieve failed: "+err.Error())
	}
	if resp.Loading && len(resp.Results) == 0 {
		w.Header().Set("Retry-After", "5")
		return writeError(w, http.StatusServiceUnavailable, LoadingMessage)
	}
	items := resultItems(resp.Results, includeSchema)
	out := map[string]any{"query": req.Query, "results": items, "fallback_used": resp.FallbackUsed}
	return writeAnswer(w, out, narrowed, req, len(items) == 0, resp.Loading)
}

// writeAnswer writes a retrieval's answer, with the note that explains an
// empty one (the key grants nothing, or allowed_servers names nothing it
// grants) and the loading mark.
func writeAnswer(w http.ResponseWriter, out map[string]any, pol policy.Policy, req RetrieveRequest, empty, loading bool) int {
	if why := pol.NoGrant(); why != "" && empty {
		if len(req.AllowedServers) > 0 {
			why = "allowed_servers names no server this API key is granted, so nothing can be found"
		}
		out["note"] = why
	}
	if loading {
		out["loading"] = true
	}
	return writeJSON(w, http.StatusOK, out)
}

// LoadingMessage answers a retrieval that found nothing because the
// catalog is still being loaded for the first time.
const LoadingMessage = "the gateway is still loading its tool catalog (the first sync of its upstream servers is in progress); retry in a few seconds"

func (a *API) tool(w http.ResponseWriter, r *http.Request) int {
	pol, ok := policy.FromContext(r.Context())
	id := r.PathValue("id")
	srv, name, split := catalog.SplitToolID(id)
	notFound := func() int { return writeError(w, http.StatusNotFound, fmt.Sprintf("tool %q not found", id)) }
	if !ok || !split || !pol.AllowsTool(srv, name) {
		return notFound()
	}
	t, err := a.cfg.Tools.GetTool(r.Context(), id)
	if errors.Is(err, catalog.ErrNotFound) {
		return notFound()
	}
	if err != nil {
		return writeError(w, http.StatusInternalServerError, "tool lookup failed: "+err.Error())
	}
	if !pol.AllowsTool(t.Server, t.Name) {
		return notFound() // the record's own (server, name) decides, not the split id
	}
	return writeJSON(w, http.StatusOK, map[string]any{
		"tool_id": t.ID, "tool_name": t.Name, "server_name": t.Server, "description": t.Description,
		"tool_type": t.ToolType, "permission_scope": t.PermissionScope, "input_schema": t.InputSchema,
		"status": t.Status, "title": t.Title,
	})
}

func (a *API) reindex(w http.ResponseWriter, r *http.Request) int {
	pol, ok := policy.FromContext(r.Context())
	if !ok || !(pol.Admin || isUnrestricted(pol)) {
		return writeError(w, http.StatusForbidden, "reindex needs an admin key")
	}
	var body struct {
		Mode string `json:"mode"`
	}
	data, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
	if len(strings.TrimSpace(string(data))) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil {
			return writeError(w, http.StatusBadRequest, "body must be {\"mode\": \"full\"|\"incremental\"}: "+err.Error())
		}
	}
	if body.Mode == "" {
		body.Mode = "full"
	}
	if body.Mode != "full" && body.Mode != "incremental" {
		return writeError(w, http.StatusBadRequest, "field \"mode\" must be \"full\" or \"incremental\"")
	}
	if a.cfg.Reindexer == nil {
		return writeError(w, http.StatusNotImplemented, "reindex is not available in this deployment")
	}
	status, err := a.cfg.Reindexer.Reindex(r.Context(), body.Mode)
	if err != nil {
		return writeError(w, http.StatusInternalServerError, "reindex failed: "+err.Error())
	}
	return writeJSON(w, http.StatusOK, map[string]any{"mode": body.Mode, "status": status})
}

func isUnrestricted(p interface{ Servers() ([]string, bool) }) bool {
	_, all := p.Servers()
	return all
}

// health answers an admin key (or an unauthenticated gateway) with the
// details, credentials removed from every string in them (upstream URLs,
// error texts); any other key learns only how many of the servers it is
// granted are up: no server ids, URLs or error texts.
func (a *API) health(w http.ResponseWriter, r *http.Request) int {
	pol, _ := policy.FromContext(r.Context())
	if !pol.Admin && !isUnrestricted(pol) {
		return writeJSON(w, http.StatusOK, a.grantedHealth(pol))
	}
	out := map[string]any{"status": "ok", "started_at": a.started}
	if a.cfg.Health != nil {
		for k, v := range a.cfg.Health(r.Context()) {
			out[k] = v
		}
	}
	return writeJSON(w, http.StatusOK, redactJSON(out))
}

// grantedHealth is the aggregate a non-admin key sees.
func (a *API) grantedHealth(pol interface{ AllowsServer(string) bool }) map[string]any {
	granted, up := 0, 0
	if a.cfg.ServerUp != nil {
		for id, isUp := range a.cfg.ServerUp() {
			if !pol.AllowsServer(id) {
				continue
			}
			granted++
			if isUp {
				up++
			}
		}
	}
	status := "ok"
	if up < granted {
		status = "degraded"
	}
	return map[string]any{"status": status, "servers": map[string]int{"granted": granted, "up": up, "down": granted - up}}
}

// redactJSON returns v as generic JSON with credentials removed from every
// string (redact.Text), whatever type the runtime put there.
func redactJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return map[string]any{"status": "ok", "error": "health details could not be encoded"}
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return map[string]any{"status": "ok", "error": "health details could not be encoded"}
	}
	var walk func(any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case string:
			return redact.Text(t)
		case map[string]any:
			out := make(map[string]any, len(t))
			for k, v := range t {
				out[redact.Text(k)] = walk(v)
			}
			return out
		case []any:
			for i := range t {
				t[i] = walk(t[i])
			}
			return t
		}
		return x
	}
	return walk(generic)
}

// metrics answers an admin key (or an unauthenticated gateway) only: the
// counters are the whole gateway's (calls per method and tool, failures,
// sessions), not the caller's.
func (a *API) metrics(w http.ResponseWriter, r *http.Request) int {
	if pol, ok := policy.FromContext(r.Context()); !ok || !(pol.Admin || isUnrestricted(pol)) {
		return writeError(w, http.StatusForbidden, "metrics are the whole gateway's counters and need an admin key")
	}
	if strings.Contains(r.Header.Get("Accept"), "text/plain") {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.WriteHeader(http.StatusOK)
		_ = a.cfg.Metrics.WritePrometheus(w)
		return http.StatusOK
	}
	return writeJSON(w, http.StatusOK, a.cfg.Metrics.Snapshot())
}

func writeJSON(w http.ResponseWriter, status int, v any) int {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // "<key>" stays readable in a client's error message; the body is never HTML
	_ = enc.Encode(v)
	return status
}

func writeError(w http.ResponseWriter, status int, msg string) int {
	return writeJSON(w, status, map[string]any{"error": msg})
}
