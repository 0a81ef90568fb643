package app

import "time"

// registerMetrics registers the one metrics set of every runtime (and the
// runtime's own, Backend.Metrics). The MCP request counters are added by
// the MCP handler as methods are seen.
func (a *App) registerMetrics() {
	m := a.Metrics
	m.Gauge("tools_in_index", func() float64 { return float64(a.Indexer.Stats().ToolsInIndex) })
	m.Gauge("tools_in_db", func() float64 { return float64(a.tools.Load()) })
	m.Gauge("index_age_seconds", func() float64 {
		if _, meta, ok := a.Indexer.Current(); ok && !meta.BuiltAt.IsZero() {
			return time.Since(meta.BuiltAt).Seconds()
		}
		return 0
	})
	m.Gauge("stale_entries", func() float64 { return float64(a.stale.Load()) })
	m.Gauge("active_servers", func() float64 {
		n := 0
		for _, id := range a.b.Upstreams.Servers() {
			if a.b.Health.Up(id) {
				n++
			}
		}
		return float64(n)
	})
	m.CounterFunc("auth_failures_total", a.authC.Failures.Load)
	m.CounterFunc("auth_rate_limited_total", a.authC.RateLimited.Load)
	m.CounterFunc("auth_failures_throttled_total", a.authC.FailureThrottled.Load)
	m.CounterFunc("auth_lookup_errors_total", a.authC.LookupErrors.Load)
	m.CounterFunc("mcp_tool_calls_total", a.MCP.Metrics.Calls.Load)
	m.CounterFunc("mcp_tool_call_errors_total", a.MCP.Metrics.CallErrors.Load)
	m.CounterFunc("mcp_calls_rejected_total", a.MCP.Metrics.CallsRejected.Load)
	m.CounterFunc("mcp_results_stored_total", a.MCP.Metrics.ResultsStored.Load)
	m.CounterFunc("mcp_result_bytes_stored_total", a.MCP.Metrics.ResultBytesStored.Load)
	m.CounterFunc("mcp_results_read_total", a.MCP.Metrics.ResultsRead.Load)
	m.CounterFunc("mcp_cancel_checks_total", a.MCP.Metrics.CancelChecks.Load)
	m.CounterFunc("mcp_cancelled_remote_total", a.MCP.Metrics.CancelledRemote.Load)
	m.CounterFunc("mcp_find_tools_total", a.MCP.Metrics.Finds.Load)
	m.CounterFunc("http_rejected_total", a.MCP.Metrics.Rejected.Load)
	if a.b.Metrics != nil {
		a.b.Metrics(m)
	}
}
