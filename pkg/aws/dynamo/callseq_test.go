package dynamo

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/callseq"
	"github.com/toolrag/mcp-gateway/pkg/callseq/callseqtest"
)

func TestCallSeqStoreConformance(t *testing.T) {
	callseqtest.Run(t, func(t *testing.T) callseq.Store {
		c, tb := testTables(t, "callseq")
		return NewCallSeqStore(c, tb.CallSeq)
	})
}

// AddCallSequences runs at most callSeqParallel UpdateItems at once, and a
// pair that fails stops no other: the error says how many were not added.
func TestAddCallSequencesBoundedAndIndependent(t *testing.T) {
	tests := []struct {
		name    string
		pairs   int
		fail    int // pairs whose UpdateItem the proxy refuses
		wantMax int32
		wantErr string
	}{
		{name: "fewer pairs than the bound", pairs: 3, wantMax: 3},
		{name: "more pairs than the bound", pairs: 20, wantMax: callSeqParallel},
		{name: "some pairs fail", pairs: 20, fail: 3, wantMax: callSeqParallel, wantErr: "(3 of 20 pairs not added)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			_, tb := testTables(t, "callseq")
			var inflight testenv.InFlight
			c := proxyClient(t, nil, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
				if operation(r) != "UpdateItem" {
					return false
				}
				defer inflight.Enter()()
				time.Sleep(30 * time.Millisecond) // long enough for the calls to overlap
				if !bytes.Contains(body, []byte(`"bad-`)) {
					return false
				}
				writeAPIError(w, "com.amazon.coral.validate#ValidationException", "injected failure")
				return true
			})
			s := NewCallSeqStore(c, tb.CallSeq)
			counts := make([]callseq.Count, tc.pairs)
			for i := range counts {
				from := fmt.Sprintf("a__t%d", i)
				if i < tc.fail {
					from = fmt.Sprintf("bad-%d", i)
				}
				counts[i] = callseq.Count{From: from, To: "a__next", N: 1, Day: 1}
			}
			err := s.AddCallSequences(ctx, counts)
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "injected failure")) {
				t.Fatalf("err = %v, want it to count the pairs not added (%s) and say why", err, tc.wantErr)
			}
			if m := inflight.Max(); m != tc.wantMax {
				t.Errorf("%d UpdateItems at once, want %d", m, tc.wantMax)
			}
			got, err := s.ListCallSequences(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.pairs-tc.fail {
				t.Errorf("%d pairs stored, want %d: a failed pair must not stop the others", len(got), tc.pairs-tc.fail)
			}
		})
	}
}
