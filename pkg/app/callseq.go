package app

import (
	"context"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/callseq"
	"github.com/toolrag/mcp-gateway/pkg/gateway"
	"github.com/toolrag/mcp-gateway/pkg/metrics"
)

// The opt-in call-sequence counts (TOOL_RAG_CALL_SEQUENCES): the MCP
// server tells App.CallSeq which tool each session called; the recorder
// adds the "called after" pairs to Backend.CallSeq in the background; each
// Apply reads them back (after flushing this process's own), keeps those
// whose tools are in the new catalog and hands them to the retriever's
// related tools.

// callSeqMaxAge: pairs not counted for this long are dropped by the
// pruning runtime.
const callSeqMaxAge = 365

// callSeqLoadTimeout bounds reading the counts in Apply.
const callSeqLoadTimeout = 10 * time.Second

// CallSeqReload is how old the counts a retrieval uses may get: the first
// retrieval after that reads them again in the background (a catalog
// apply reads them too). Tests shorten it.
var CallSeqReload = 10 * time.Minute

// newCallSeq builds App.CallSeq when the feature is on and returns what
// the MCP server reports calls to (nil when off).
func (a *App) newCallSeq() gateway.CallObserver {
	if !a.o.Env.CallSequences {
		return nil
	}
	if a.b.CallSeq == nil {
		a.log.Warn("TOOL_RAG_CALL_SEQUENCES is on, but this runtime has no store for the counts; nothing is counted")
		return nil
	}
	a.CallSeq = callseq.NewRecorder(callseq.RecorderConfig{Store: a.b.CallSeq, Logger: a.log,
		MinPrincipals: a.o.Env.CallSeqMinPrincipals, PrincipalDayCap: a.o.Env.CallSeqPrincipalDayCap})
	return a.CallSeq
}

// loadCallSequences reads the counts and hands the retriever those whose
// tools are in the catalog copy; on an error the previous ones stay.
func (a *App) loadCallSequences(ctx context.Context) {
	a.seqMu.Lock()
	defer a.seqMu.Unlock()
	a.seqAt.Store(time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(ctx, callSeqLoadTimeout)
	defer cancel()
	if err := a.CallSeq.Flush(ctx); err != nil {
		a.log.Warn("could not store this process's call-sequence counts before reading them", "error", err)
	}
	tools, _, _ := a.Catalog.Content()
	ids := make(map[string]bool, len(tools))
	for _, t := range tools {
		ids[t.ID] = true
	}
	exists := func(id string) bool { return ids[id] }
	var (
		counts []callseq.Count
		err    error
	)
	if a.b.PruneCallSeq && len(ids) > 0 {
		counts, err = callseq.Prune(ctx, a.b.CallSeq, exists, callseq.Day(time.Now())-callSeqMaxAge)
	} else {
		counts, err = a.b.CallSeq.ListCallSequences(ctx)
	}
	if err != nil && counts == nil {
		a.log.Warn("could not read the call-sequence counts; related keeps the previous ones", "error", err)
		return
	}
	if err != nil {
		a.log.Warn("could not drop the call-sequence counts of tools that are gone", "error", err)
	}
	a.Retriever.SetCallSequences(callseq.NewTable(counts, exists))
}

// maybeReloadCallSequences starts a background read of the counts when
// the last one started more than CallSeqReload ago: a process whose
// catalog does not change (no resync, no new index) still sees the
// counts other processes and its own sessions added. One atomic load on
// the retrieval path.
func (a *App) maybeReloadCallSequences() {
	if a.CallSeq == nil {
		return
	}
	last := a.seqAt.Load()
	now := time.Now().UnixNano()
	if last == 0 || now-last < int64(CallSeqReload) || !a.seqAt.CompareAndSwap(last, now) {
		return // not loaded yet (Apply will), fresh enough, or another retrieval starts it
	}
	go a.loadCallSequences(context.Background())
}

// FlushCallSequences adds the counts this process has not stored yet to
// the store (at shutdown). Nothing to do when the feature is off.
func (a *App) FlushCallSequences(ctx context.Context) error {
	return a.CallSeq.Flush(ctx)
}

// registerCallSeqMetrics adds the recorder's counters to /metrics.
func (a *App) registerCallSeqMetrics(m *metrics.Registry) {
	if a.CallSeq == nil {
		return
	}
	r := a.CallSeq
	m.CounterFunc("callseq_pairs_counted_total", func() int64 { return r.Stats().Counted })
	m.CounterFunc("callseq_pairs_flushed_total", func() int64 { return r.Stats().Flushed })
	m.CounterFunc("callseq_flush_errors_total", func() int64 { return r.Stats().Errors })
	m.CounterFunc("callseq_pairs_dropped_total", func() int64 { return r.Stats().Dropped })
	m.Gauge("callseq_pairs_loaded", func() float64 { return float64(a.Retriever.CallSequences().Pairs()) })
}
