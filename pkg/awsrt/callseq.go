package awsrt

import (
	"context"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/callseq"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// callSeqStore is the call-sequence table when TOOL_RAG_CALL_SEQUENCES is
// on (nil otherwise): the gateways add the counts and read them back with
// each catalog they apply; the sync function drops the pairs of tools that
// left the catalog (pruneCallSequences).
func callSeqStore(cfg Config) callseq.Store {
	if !cfg.Env.CallSequences || cfg.Tables.CallSeq == "" {
		return nil
	}
	return dynamo.NewCallSeqStore(cfg.DynamoDB, cfg.Tables.CallSeq)
}

// callSeqMaxAge: pairs not counted for a year are dropped.
const callSeqMaxAge = 365

// pruneCallSequences drops the counts of tools that are not in the catalog
// the sync has just read (never on an empty catalog). Errors are logged:
// the counts are statistics, the sync goes on.
func (s *Syncer) pruneCallSequences(ctx context.Context, c *catalog.Copy) {
	store := callSeqStore(s.cfg)
	if store == nil || c.Len() == 0 {
		return
	}
	tools, _, _ := c.Content()
	ids := make(map[string]bool, len(tools))
	for _, t := range tools {
		ids[t.ID] = true
	}
	kept, err := callseq.Prune(ctx, store, func(id string) bool { return ids[id] }, callseq.Day(time.Now())-callSeqMaxAge)
	if err != nil {
		s.log.Warn("could not prune the call-sequence counts", "error", err)
		return
	}
	s.log.Info("call-sequence counts pruned", "pairs", len(kept))
}
