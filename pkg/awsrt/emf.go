package awsrt

import (
	"time"

	"github.com/toolrag/mcp-gateway/pkg/metrics"
)

// emitSyncMetrics writes one EMF line set for a sync run:
// sync_runs_total, sync_failures_total (the run returned an error: the
// registry, the tools table or the index build), sync_successes_total
// (the index staleness alarm watches it: no success for hours means the
// published index no longer follows the upstreams), sync_stale_servers
// and sync_duration_seconds.
func emitSyncMetrics(cfg Config, rep SyncReport, err error) {
	reg := metrics.New()
	reg.Counter("sync_runs_total").Add(1)
	failures, successes := reg.Counter("sync_failures_total"), reg.Counter("sync_successes_total")
	if err != nil {
		failures.Add(1)
	} else {
		successes.Add(1)
	}
	stale := float64(len(rep.Sync.Stale))
	reg.Gauge("sync_stale_servers", func() float64 { return stale })
	took := rep.Duration.Seconds()
	reg.Gauge("sync_duration_seconds", func() float64 { return took })
	metrics.NewEmitter(reg, cfg.MetricsNamespace, 0, cfg.metricsOut).Flush(time.Now())
}

// emitHealthMetrics writes one EMF line set for a probe round:
// upstreams_up and upstreams_down.
func emitHealthMetrics(cfg Config, rep HealthReport) {
	reg := metrics.New()
	up, down := float64(len(rep.Up)), float64(len(rep.Down))
	reg.Gauge("upstreams_up", func() float64 { return up })
	reg.Gauge("upstreams_down", func() float64 { return down })
	metrics.NewEmitter(reg, cfg.MetricsNamespace, 0, cfg.metricsOut).Flush(time.Now())
}
