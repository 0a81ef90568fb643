package bridge

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Health is what GET /health reports.
type Health struct {
	// Status is "ok" (the server answered a ping), "unavailable" or
	// "draining" (shutting down).
	Status string `json:"status"`
	// Processes is the number of live server processes, PIDs their ids
	// (-1 and none where /proc is missing).
	Processes int   `json:"processes"`
	PIDs      []int `json:"pids,omitempty"`
	// Server and Version are the child's serverInfo; Protocol is the MCP
	// version the bridge speaks with it.
	Server   string `json:"server"`
	Version  string `json:"version,omitempty"`
	Protocol string `json:"protocol,omitempty"`
	// Sizes of the mirrored lists.
	Tools             int `json:"tools"`
	Prompts           int `json:"prompts"`
	Resources         int `json:"resources"`
	ResourceTemplates int `json:"resource_templates"`
	// LastRefresh is when the lists were last re-read; RefreshError why
	// that failed, if it did.
	LastRefresh  time.Time `json:"last_refresh"`
	RefreshError string    `json:"refresh_error,omitempty"`
	// UptimeSeconds counts from New.
	UptimeSeconds int64 `json:"uptime_seconds"`
	// Error says why Status is not "ok".
	Error string `json:"error,omitempty"`
	// ListChangesDamped says why the server's list changes no longer
	// trigger syncs for a while (it announced them in a loop).
	ListChangesDamped string `json:"list_changes_damped,omitempty"`
}

// Health pings the server through the pool (starting a process if none is
// running) within Config.HealthTimeout and reports the result.
func (b *Bridge) Health(ctx context.Context) Health {
	h := Health{Status: "ok", Server: b.info.Name, Version: b.info.Version, Protocol: b.info.ProtocolVersion,
		UptimeSeconds: int64(time.Since(b.start).Seconds())}
	if h.Server == "" {
		h.Server = b.id
	}
	if b.draining.Load() {
		h.Status, h.Error = "draining", "the bridge is shutting down"
	} else {
		pctx, cancel := context.WithTimeout(ctx, b.cfg.HealthTimeout)
		err := b.m.Ping(pctx, b.id)
		cancel()
		if err != nil {
			h.Status, h.Error = "unavailable", err.Error()
			b.failed(err)
		}
	}
	h.ListChangesDamped = b.live.Report()[b.id]
	h.PIDs = b.PIDs()
	h.Processes = len(h.PIDs)
	if !procAvailable {
		h.Processes = -1
	}
	m := b.counts()
	h.Tools, h.Prompts, h.Resources, h.ResourceTemplates = m.tools.n, m.prompts.n, m.resources.n, m.templates.n
	h.LastRefresh = m.refreshed.UTC()
	if m.refreshErr != nil {
		h.RefreshError = m.refreshErr.Error()
	}
	return h
}

// serveHealth answers GET/HEAD /health: 200 when the server answers a
// ping, 503 otherwise, with Health as JSON.
func (b *Bridge) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "use GET /health", http.StatusMethodNotAllowed)
		return
	}
	h := b.Health(r.Context())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if h.Status == "ok" {
		w.WriteHeader(http.StatusOK)
	} else {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	if r.Method == http.MethodGet {
		_ = json.NewEncoder(w).Encode(h)
	}
}
