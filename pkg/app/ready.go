package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/metrics/usage"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// WhileLoading is what a request meets while the App has no catalog to
// serve: the first full catalog is not applied yet, and no stored one is
// served either (the one readiness rule; see Ready). The runtimes differ
// only in this option.
type WhileLoading int

const (
	// ServeWhileLoading (local): requests are served at once. A retrieval
	// (find_tools, plan, POST /tool-rag/retrieve) waits for the first
	// catalog, up to Options.StartupWait and 1s before its own deadline,
	// then answers from what there is, marked "loading". GET /health
	// answers 200 with "status":"loading". A process that listens before
	// its first sync answers at once, and callers learn it is loading.
	ServeWhileLoading WhileLoading = iota
	// RejectWhileLoading (Lambda): every MCP and REST request waits for
	// the first catalog until 1s before its own deadline, then is answered
	// 503 with Retry-After. GET /health answers 503 with
	// "status":"loading". An invocation has a deadline and its caller
	// retries; nothing is served from a half-loaded function.
	RejectWhileLoading
)

// DefaultStartupWait bounds the wait of a retrieval for the first catalog
// (ServeWhileLoading).
const DefaultStartupWait = 20 * time.Second

// answerMargin is the time a waiting request keeps to answer before its
// deadline.
const answerMargin = time.Second

// Ready reports whether the first full catalog has been applied.
func (a *App) Ready() bool { return a.ready.Load() }

// Loaded is closed when the first full catalog has been applied.
func (a *App) Loaded() <-chan struct{} { return a.loaded }

// serving reports whether there is a catalog to serve: the first full one
// is applied, or a non-empty stored one is served meanwhile.
func (a *App) serving() bool { return a.ready.Load() || a.stored.Load() }

// waitLoaded waits until there is a catalog to serve, bounded by max and by
// answerMargin before ctx's deadline; it reports whether there is one.
func (a *App) waitLoaded(ctx context.Context, max time.Duration) bool {
	if a.serving() {
		return true
	}
	wait := max
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl)-answerMargin)
	}
	if wait <= 0 {
		return a.serving()
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-a.loaded:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return a.serving()
}

// gate applies RejectWhileLoading to h: a request waits for the first
// catalog until Options.GiveUpAt (default: answerMargin before its
// deadline), then is answered 503 with Retry-After.
func (a *App) gate(h http.Handler) http.Handler {
	if a.o.WhileLoading != RejectWhileLoading {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := !a.invoked.Swap(true)
		if !a.serving() {
			var by time.Time
			if a.o.GiveUpAt != nil {
				by = a.o.GiveUpAt(r.Context(), first)
			} else if d, ok := r.Context().Deadline(); ok {
				by = d.Add(-answerMargin)
			}
			var giveUp <-chan time.Time
			if !by.IsZero() {
				t := time.NewTimer(time.Until(by))
				defer t.Stop()
				giveUp = t.C
			}
			select {
			case <-a.loaded:
			case <-r.Context().Done():
				return
			case <-giveUp:
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
				enc := json.NewEncoder(w)
				enc.SetEscapeHTML(false)
				_ = enc.Encode(map[string]string{"error": fmt.Sprintf(
					"the gateway is still loading its tool catalog and index (started %s ago); retry shortly",
					time.Since(a.started).Round(100*time.Millisecond))})
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// retrieval serves find_tools, plan and POST /tool-rag/retrieve: under
// ServeWhileLoading, while a first load is under way on an empty
// catalog, it waits for it and marks an answer given without it Loading.
// (A gateway used without a first load, such as a one-shot command,
// answers from its store at once.)
// retrieval is the retriever of one consumer: source names it in the
// usage counts (usage.FindTools for the MCP server, usage.REST for the
// REST API; "" for the console's playground, which is not counted).
type retrieval struct {
	a      *App
	source string
}

func (s retrieval) Retrieve(ctx context.Context, req retrieve.Request) (retrieve.Response, error) {
	loading := s.before(ctx)
	resp, err := s.a.Retriever.Retrieve(ctx, req)
	resp.Loading = loading
	if err == nil && s.source != "" {
		s.a.Usage.Retrieval(req.Policy.KeyID, s.source, []string{bestMatch(resp.Results)})
	}
	return resp, err
}

func bestMatch(rs []retrieve.Result) string {
	if len(rs) == 0 {
		return usage.None
	}
	return rs[0].Match
}

// SearchGroups implements retrieve.GroupSearcher, so that several queries
// keep the retriever's one-pass search.
func (s retrieval) SearchGroups(ctx context.Context, req retrieve.Request, queries []string) (retrieve.GroupResponse, error) {
	loading := s.before(ctx)
	resp, err := s.a.Retriever.SearchGroups(ctx, req, queries)
	resp.Loading = loading
	if err == nil && s.source != "" {
		matches := make([]string, len(resp.Groups))
		for i, g := range resp.Groups {
			matches[i] = bestMatch(g.Results)
		}
		s.a.Usage.Retrieval(req.Policy.KeyID, s.source, matches)
	}
	return resp, err
}

// before runs ahead of every retrieval: the wait for the first load under
// ServeWhileLoading (it reports whether the answer is given without it)
// and the reload of call sequences that are old.
func (s retrieval) before(ctx context.Context) (loading bool) {
	if s.a.o.WhileLoading == ServeWhileLoading && s.a.firstUp.Load() {
		loading = !s.a.waitLoaded(ctx, s.a.o.StartupWait)
	}
	s.a.maybeReloadCallSequences()
	return loading
}
