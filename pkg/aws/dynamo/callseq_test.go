package dynamo

import (
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/callseq"
	"github.com/toolrag/mcp-gateway/pkg/callseq/callseqtest"
)

func TestCallSeqStoreConformance(t *testing.T) {
	callseqtest.Run(t, func(t *testing.T) callseq.Store {
		c, tb := testTables(t, "callseq")
		return NewCallSeqStore(c, tb.CallSeq)
	})
}
