package awsrt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/aws/s3bucket"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/health"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
	"github.com/toolrag/mcp-gateway/pkg/syncer"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// SyncEvent is what the sync function accepts: an EventBridge scheduled
// event (incremental) or a direct invocation such as {"mode":"full"} (the
// gateway's reindex sends one).
type SyncEvent struct {
	Mode       string `json:"mode,omitempty"` // full | incremental (default)
	Source     string `json:"source,omitempty"`
	DetailType string `json:"detail-type,omitempty"`
	// Servers, when set, syncs only these registered servers (ones that
	// announced a change of their lists: the stdio bridge sends
	// {"servers":["id"],"source":"toolrag-bridge/list_changed"}).
	Servers []string `json:"servers,omitempty"`
}

// ParseSyncEvent reads an invocation payload; an empty payload means an
// incremental sync.
func ParseSyncEvent(payload []byte) (indexer.Mode, SyncEvent, error) {
	var ev SyncEvent
	if len(bytes.TrimSpace(payload)) > 0 && string(bytes.TrimSpace(payload)) != "null" {
		if err := json.Unmarshal(payload, &ev); err != nil {
			return "", ev, fmt.Errorf("sync event is not a JSON object like {\"mode\":\"full\"} or an EventBridge event: %w", err)
		}
	}
	switch ev.Mode {
	case "", string(indexer.ModeIncremental):
		return indexer.ModeIncremental, ev, nil
	case string(indexer.ModeFull):
		return indexer.ModeFull, ev, nil
	}
	return "", ev, fmt.Errorf("sync event mode %q: want \"full\" or \"incremental\"", ev.Mode)
}

// SyncReport is what one sync did.
type SyncReport struct {
	Sync     syncer.Report       `json:"sync"`
	Index    indexer.BuildResult `json:"index"`
	IndexErr string              `json:"index_error,omitempty"`
	// CatalogCopyErr says why the catalog copy was not written (gateways
	// then scan the tools table at cold start).
	CatalogCopyErr string        `json:"catalog_copy_error,omitempty"`
	Trigger        string        `json:"trigger,omitempty"`
	Duration       time.Duration `json:"duration_ns"`

	// SurfaceErrors are the servers whose prompts and resources could
	// not be listed (gateways keep the ones stored before), with why.
	SurfaceErrors map[string]string `json:"surface_errors,omitempty"`
}

// Syncer is the sync function: registry table → upstream tool lists →
// tools table (unreachable servers are marked stale, never deleted) → index
// build (incremental: only documents whose content hash changed are
// embedded again) → atomic publish to S3. A warm Syncer keeps its upstream
// sessions and its last index between invocations. Its Indexer reads the
// catalog Run has just read, so build through Run.
type Syncer struct {
	Tools     *dynamo.ToolStore
	Registry  *dynamo.RegistryStore
	Upstreams *upstream.Manager
	Indexer   *indexer.Indexer

	cfg     Config
	log     *slog.Logger
	bucket  *s3bucket.Bucket
	catalog *catalog.Copy // the tools table as the last run read it
	copies  *indexpub.CatalogWriter
	mu      sync.Mutex // one run at a time per instance
}

// NewSyncer builds the sync function's parts.
func NewSyncer(ctx context.Context, cfg Config) (*Syncer, error) {
	dm := &dynamo.Metrics{}
	cfg, emb, err := cfg.prepare(ctx, dm, false)
	if err != nil {
		return nil, err
	}
	s := &Syncer{cfg: cfg, log: cfg.Logger}
	s.Tools = dynamo.NewToolStore(cfg.DynamoDB, cfg.Tables.Tools)
	s.Tools.Metrics = dm
	s.Registry = dynamo.NewRegistryStore(cfg.DynamoDB, cfg.Tables.Registry)
	s.Registry.Metrics = dm
	s.Upstreams = upstream.NewManager(cfg.Env.UpstreamOptions(cfg.Logger))
	s.bucket = s3bucket.New(cfg.S3, cfg.Bucket)
	// One read of the table per run serves the index build and the
	// catalog copy.
	s.catalog = catalog.NewCopy(s.Tools)
	s.copies = &indexpub.CatalogWriter{Tools: s.catalog, Bucket: s.bucket, Prefix: cfg.Prefix, Log: cfg.Logger,
		Keywords: retrieve.NewKeywordAnalyser()}
	s.Indexer, err = indexer.New(indexer.Config{
		Catalog: s.catalog, Embedder: emb, Bucket: s.bucket, Prefix: cfg.Prefix, Logger: cfg.Logger,
		BeforeSwitch: s.copies.BeforeSwitch,
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Close stops the upstream sessions.
func (s *Syncer) Close() error { return s.Upstreams.Close() }

// Handle is the Lambda entry point: it parses the event and runs a sync.
func (s *Syncer) Handle(ctx context.Context, payload json.RawMessage) (SyncReport, error) {
	mode, ev, err := ParseSyncEvent(payload)
	if err != nil {
		return SyncReport{}, err
	}
	rep, err := s.RunServers(ctx, mode, ev.Servers)
	emitSyncMetrics(s.cfg, rep, err)
	rep.Trigger = ev.Source
	if ev.DetailType != "" {
		rep.Trigger = ev.DetailType
	}
	return rep, err
}

// RunServers syncs the given upstreams (nil: every registered one; a
// server outside a given list is not purged) and publishes the index. A
// failed index build or publish is reported in SyncReport.IndexErr and
// returned; the catalog is updated either way, and the previous index
// stays published.
func (s *Syncer) RunServers(ctx context.Context, mode indexer.Mode, only []string) (SyncReport, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := time.Now()
	var rep SyncReport
	out, err := syncer.Sync(ctx, syncer.Config{
		Upstreams: s.Upstreams, Store: s.Tools, Parallel: s.cfg.Env.SyncParallel,
		Timeout: s.cfg.Env.SyncTimeout, Logger: s.log, MaxTools: s.cfg.Env.MaxTools, Servers: only,
	}, syncer.Hooks{
		Registry: func(ctx context.Context) (map[string]upstream.ServerConfig, error) {
			servers, err := loadServers(ctx, s.Registry, s.cfg.secret, s.log)
			if err != nil {
				return nil, fmt.Errorf("sync: read the upstream registry: %w", err)
			}
			s.Upstreams.SetServers(servers)
			return servers, nil
		},
		// Prompts and resources, stored for the gateways.
		Surfaces: func(ctx context.Context, listable map[string]upstream.ServerConfig) map[string]string {
			return syncer.SyncSurfaces(ctx, s.Upstreams, s.Registry, listable, s.cfg.Env.SyncParallel, s.cfg.UpstreamListTimeout, s.log)
		},
		Publish: func(ctx context.Context, _ syncer.Report) error { return s.publish(ctx, mode, &rep) },
	})
	rep.Sync, rep.SurfaceErrors = out.Sync, out.SurfaceErrors
	if err != nil {
		rep.Duration = time.Since(start)
		return rep, err
	}
	rep.Duration = time.Since(start)
	s.log.Info("sync done", "servers", rep.Sync.Servers, "synced", rep.Sync.Synced, "stale", len(rep.Sync.Stale),
		"degraded", len(rep.Sync.Degraded), "refused", len(rep.Sync.Refused), "changed", rep.Sync.Changed, "index_mode", string(rep.Index.Mode), "tools", rep.Index.Tools,
		"embedded", rep.Index.Embedded, "reused", rep.Index.Reused, "took", rep.Duration.Round(time.Millisecond))
	return rep, nil
}

// publish reads the catalog the sync stored once, for the index build and
// the catalog copy, and publishes the index (a failed build or publish is
// reported in rep.IndexErr; the previous index stays published).
func (s *Syncer) publish(ctx context.Context, mode indexer.Mode, rep *SyncReport) error {
	if err := s.catalog.Load(ctx); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	// Not kept between runs: a warm function would hold a second catalog
	// while the next run reads the table.
	defer s.catalog.Release()
	s.pruneCallSequences(ctx, s.catalog)
	s.copies.Reset()
	var err error
	rep.Index, err = s.Indexer.Build(ctx, mode)
	// A build that was published wrote the catalog copy before its
	// pointer switched; otherwise the table may still have changed, and
	// the copy of the published index is written again.
	s.copies.Refresh(ctx)
	if cerr := s.copies.Err(); cerr != nil {
		rep.CatalogCopyErr = cerr.Error()
	}
	if err != nil {
		rep.IndexErr = err.Error()
	}
	return err
}

// HealthReport is what one probe round found.
type HealthReport = health.Report

// Prober is the health function: it probes every registered upstream and
// records the result in the registry table, which gateways read (cached
// for HealthCacheTTL) to withhold the tools of servers that are down.
type Prober struct {
	Registry  *dynamo.RegistryStore
	Upstreams *upstream.Manager

	cfg Config
	log *slog.Logger
	mu  sync.Mutex
}

// NewProber builds the health function's parts.
func NewProber(ctx context.Context, cfg Config) (*Prober, error) {
	if cfg.Bucket == "" {
		cfg.Bucket = "-" // the health function does not read the index
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.DynamoDB == nil {
		if cfg.DynamoDB, err = dynamo.NewClient(ctx, cfg.DynamoDBEndpoint, nil); err != nil {
			return nil, err
		}
	}
	if err := cfg.secretSource(ctx); err != nil {
		return nil, err
	}
	return &Prober{
		Registry:  dynamo.NewRegistryStore(cfg.DynamoDB, cfg.Tables.Registry),
		Upstreams: upstream.NewManager(cfg.Env.UpstreamOptions(cfg.Logger)),
		cfg:       cfg, log: cfg.Logger,
	}, nil
}

// Close stops the upstream sessions.
func (p *Prober) Close() error { return p.Upstreams.Close() }

// Handle is the Lambda entry point; the event (a scheduled event) is
// ignored.
func (p *Prober) Handle(ctx context.Context, _ json.RawMessage) (HealthReport, error) {
	rep, err := p.Run(ctx)
	emitHealthMetrics(p.cfg, rep)
	return rep, err
}

// Run probes every registered server (each within
// TOOL_RAG_HEALTHCHECK_TIMEOUT) and writes its status.
func (p *Prober) Run(ctx context.Context) (HealthReport, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	servers, err := loadServers(ctx, p.Registry, p.cfg.secret, p.log)
	if err != nil {
		return HealthReport{}, fmt.Errorf("health: read the upstream registry: %w", err)
	}
	p.Upstreams.SetServers(servers)
	timeout := p.cfg.Env.HealthTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	rep, err := health.ProbeAndRecord(ctx, p.Upstreams, p.Registry, timeout, p.cfg.HealthParallel)
	if len(rep.Down) > 0 {
		p.log.Warn("upstreams down", "down", rep.Down)
	}
	return rep, err
}
