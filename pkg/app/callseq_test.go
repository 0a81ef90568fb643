package app_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/app"
	"github.com/toolrag/mcp-gateway/pkg/callseq"
	"github.com/toolrag/mcp-gateway/pkg/catalog/sqlite"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
	"github.com/toolrag/mcp-gateway/pkg/session"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// unreadable fails ListCallSequences while fail is set (a store outage in
// front of the real SQLite store).
type unreadable struct {
	*sqlite.Store
	fail atomic.Bool
}

func (u *unreadable) ListCallSequences(ctx context.Context) ([]callseq.Count, error) {
	if u.fail.Load() {
		return nil, errors.New("store unavailable")
	}
	return u.Store.ListCallSequences(ctx)
}

// Each Apply hands the retriever the stored counts of tools in the new
// catalog and (PruneCallSeq) drops the others from the store; when the
// counts cannot be read, the catalog is applied and the previous counts
// stay. With the feature on but no store, nothing is counted.
func TestApplyLoadsCallSequences(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sq := textStore(t, dir)
	if err := sq.AddCallSequences(ctx, []callseq.Count{
		{From: "text__reverse", To: "text__upper", N: 4, Day: callseq.Day(time.Now())},
		{From: "text__upper", To: "gone__tool", N: 4, Day: callseq.Day(time.Now())},
	}); err != nil {
		t.Fatal(err)
	}
	store := &unreadable{Store: sq}
	env, err := config.FromEnv(func(k string) string {
		return map[string]string{"TOOL_RAG_WITHOUT_AUTH": "1", "TOOL_RAG_CALL_SEQUENCES": "1"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	up := upstream.NewManager(env.UpstreamOptions(nil))
	defer up.Close()
	backend := app.Backend{Runtime: "test", Catalog: sq, Sessions: session.NewMemory(), Upstreams: up,
		Embedder: embed.NewBuiltin(), Index: indexpub.NewDirBucket(filepath.Join(dir, "index")), CallSeq: store, PruneCallSeq: true}
	a, err := app.New(backend, app.Options{Env: env, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if a.CallSeq == nil {
		t.Fatal("no recorder with the feature on")
	}
	if _, err := a.Apply(ctx, app.Change{NoUpstreams: true}); err != nil {
		t.Fatal(err)
	}
	seq := a.Retriever.CallSequences()
	if seq.Pairs() != 1 || len(seq.With("text__reverse")) != 1 || seq.With("text__reverse")[0].Tool != "text__upper" {
		t.Fatalf("loaded %d pairs (%v), want text__reverse → text__upper only", seq.Pairs(), seq.With("text__reverse"))
	}
	if cs, _ := sq.ListCallSequences(ctx); len(cs) != 1 {
		t.Fatalf("the store still holds %v; the pair of the gone tool should be dropped", cs)
	}
	if got := a.Metrics.Snapshot()["callseq_pairs_loaded"]; got != 1 {
		t.Fatalf("callseq_pairs_loaded = %v, want 1", got)
	}

	// A process whose catalog does not change reads the counts again on
	// a retrieval once they are CallSeqReload old.
	if err := sq.AddCallSequences(ctx, []callseq.Count{{From: "text__upper", To: "text__reverse", N: 3, Day: callseq.Day(time.Now())}}); err != nil {
		t.Fatal(err)
	}
	saved := app.CallSeqReload
	app.CallSeqReload = time.Millisecond
	defer func() { app.CallSeqReload = saved }()
	time.Sleep(5 * time.Millisecond)
	for deadline := time.Now().Add(5 * time.Second); a.Retriever.CallSequences().Pairs() != 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the counts were not read again: %d pairs", a.Retriever.CallSequences().Pairs())
		}
		req := httptest.NewRequest("POST", "/tool-rag/retrieve", strings.NewReader(`{"query":"reverse a string"}`))
		rec := httptest.NewRecorder()
		a.Handler.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("retrieve: %d %s", rec.Code, rec.Body)
		}
	}
	app.CallSeqReload = saved

	store.fail.Store(true)
	if _, err := a.Apply(ctx, app.Change{NoUpstreams: true}); err != nil {
		t.Fatalf("Apply failed because the counts could not be read: %v", err)
	}
	if seq := a.Retriever.CallSequences(); seq.Pairs() != 2 || len(seq.With("text__upper")) != 1 {
		t.Fatalf("an unreadable store replaced the previous counts: %d pairs", seq.Pairs())
	}

	backend.CallSeq = nil
	b, err := app.New(backend, app.Options{Env: env, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if b.CallSeq != nil {
		t.Fatal("a recorder without a store")
	}
	if err := b.FlushCallSequences(ctx); err != nil {
		t.Fatalf("FlushCallSequences with the feature unusable: %v", err)
	}
}
