package app

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Health is the body of GET /health, the same in every runtime. It says
// nothing that needs a key: no server names, no errors.
type Health struct {
	// Status is "ok" once the first full catalog is applied, "loading"
	// before.
	Status      string    `json:"status"`
	Ready       bool      `json:"ready"`
	Runtime     string    `json:"runtime"`
	Version     string    `json:"version"`
	StartedAt   time.Time `json:"started_at"`
	CatalogSize int       `json:"catalog_size"`
	IndexSize   int       `json:"index_size"`
	// Fallback is true while there is no vector index: find_tools then
	// answers with the keyword fallback.
	Fallback bool `json:"fallback"`
}

// HealthNow returns what GET /health answers now.
func (a *App) HealthNow() Health {
	h := Health{Status: "loading", Ready: a.ready.Load(), Runtime: a.b.Runtime, Version: Version,
		StartedAt: a.started, CatalogSize: a.Catalog.Len(), IndexSize: a.Indexer.Stats().ToolsInIndex}
	if h.Ready {
		h.Status = "ok"
	}
	h.Fallback = h.IndexSize == 0
	return h
}

// serveHealth answers GET /health: 200, or 503 with Retry-After while
// loading under RejectWhileLoading.
func (a *App) serveHealth(w http.ResponseWriter, r *http.Request) {
	h := a.HealthNow()
	w.Header().Set("Content-Type", "application/json")
	if !h.Ready && a.o.WhileLoading == RejectWhileLoading {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(h)
}

// details are the fields of GET /tool-rag/health (for callers with a
// key): /health's, the index statistics, the servers that are down, and
// the runtime's own (Backend.Details).
func (a *App) details(ctx context.Context) map[string]any {
	h := a.HealthNow()
	out := map[string]any{
		"status": h.Status, "ready": h.Ready, "runtime": h.Runtime, "version": h.Version, "started_at": h.StartedAt,
		"catalog_size": h.CatalogSize, "index_size": h.IndexSize, "fallback": h.Fallback,
		"index": a.Indexer.Stats(), "servers_down": a.b.Health.Down(),
	}
	if d := a.MCP.ListsDegraded(); len(d) > 0 {
		out["lists_degraded"] = d
	}
	if a.b.Details != nil {
		for k, v := range a.b.Details(ctx) {
			out[k] = v
		}
	}
	return out
}
