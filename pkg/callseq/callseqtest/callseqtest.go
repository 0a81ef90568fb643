// Package callseqtest is the conformance suite of callseq.Store
// implementations: the SQLite store and the DynamoDB table run it.
package callseqtest

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/callseq"
)

// Run runs the suite; newStore returns an empty store.
func Run(t *testing.T, newStore func(t *testing.T) callseq.Store) {
	ctx := context.Background()
	sorted := func(cs []callseq.Count) []callseq.Count {
		out := append([]callseq.Count(nil), cs...)
		sort.Slice(out, func(i, j int) bool {
			if out[i].From != out[j].From {
				return out[i].From < out[j].From
			}
			return out[i].To < out[j].To
		})
		return out
	}
	list := func(t *testing.T, s callseq.Store) []callseq.Count {
		t.Helper()
		got, err := s.ListCallSequences(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return sorted(got)
	}

	t.Run("empty", func(t *testing.T) {
		s := newStore(t)
		if got := list(t, s); len(got) != 0 {
			t.Fatalf("a new store lists %v", got)
		}
		if err := s.AddCallSequences(ctx, nil); err != nil {
			t.Fatalf("adding nothing: %v", err)
		}
		if err := s.DeleteCallSequences(ctx, nil); err != nil {
			t.Fatalf("deleting nothing: %v", err)
		}
	})

	t.Run("add sums counts and keeps the later day", func(t *testing.T) {
		s := newStore(t)
		must(t, s.AddCallSequences(ctx, []callseq.Count{
			{From: "web__navigate", To: "web__screenshot", N: 2, Day: 20000},
			{From: "web__screenshot", To: "web__navigate", N: 1, Day: 20000},
		}))
		must(t, s.AddCallSequences(ctx, []callseq.Count{
			{From: "web__navigate", To: "web__screenshot", N: 3, Day: 19990}, // an older day: the day stays
			{From: "a__x", To: "b__y", N: 1, Day: 20001},
		}))
		must(t, s.AddCallSequences(ctx, []callseq.Count{
			{From: "a__x", To: "b__y", N: 4, Day: 20005},
			{From: "a__x", To: "b__y", N: 1, Day: 20003}, // the same pair twice in one batch
		}))
		want := []callseq.Count{
			{From: "a__x", To: "b__y", N: 6, Day: 20005},
			{From: "web__navigate", To: "web__screenshot", N: 5, Day: 20000},
			{From: "web__screenshot", To: "web__navigate", N: 1, Day: 20000},
		}
		if got := list(t, s); !reflect.DeepEqual(got, want) {
			t.Fatalf("counts:\n got %v\nwant %v", got, want)
		}
	})

	t.Run("delete removes only the given pairs", func(t *testing.T) {
		s := newStore(t)
		must(t, s.AddCallSequences(ctx, []callseq.Count{
			{From: "a__x", To: "a__y", N: 1, Day: 1}, {From: "a__y", To: "a__x", N: 2, Day: 1}, {From: "a__x", To: "a__z", N: 3, Day: 1},
		}))
		must(t, s.DeleteCallSequences(ctx, []callseq.Count{{From: "a__x", To: "a__y"}, {From: "gone__a", To: "gone__b"}}))
		want := []callseq.Count{{From: "a__x", To: "a__z", N: 3, Day: 1}, {From: "a__y", To: "a__x", N: 2, Day: 1}}
		if got := list(t, s); !reflect.DeepEqual(got, want) {
			t.Fatalf("after delete:\n got %v\nwant %v", got, want)
		}
	})

	t.Run("bad input is refused and loses nothing", func(t *testing.T) {
		s := newStore(t)
		good := callseq.Count{From: "a__x", To: "a__y", N: 1, Day: 1}
		must(t, s.AddCallSequences(ctx, []callseq.Count{good}))
		for name, bad := range map[string]callseq.Count{
			"empty from": {To: "a__y", N: 1},
			"self":       {From: "a__x", To: "a__x", N: 1},
			"zero":       {From: "a__x", To: "a__z", N: 0},
			"negative":   {From: "a__x", To: "a__y", N: -5},
			"long":       {From: strings.Repeat("x", callseq.MaxToolID+1), To: "a__y", N: 1},
		} {
			err := s.AddCallSequences(ctx, []callseq.Count{{From: "a__x", To: "a__y", N: 7, Day: 2}, bad})
			if err == nil || !strings.Contains(err.Error(), "call sequence") {
				t.Errorf("%s: error %v, want a call-sequence error", name, err)
			}
		}
		if got := list(t, s); !reflect.DeepEqual(got, []callseq.Count{good}) {
			t.Fatalf("after refused batches: %v, want %v", got, []callseq.Count{good})
		}
	})

	t.Run("concurrent adds lose nothing", func(t *testing.T) {
		s := newStore(t)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; i < 5; i++ {
					if err := s.AddCallSequences(ctx, []callseq.Count{
						{From: "a__x", To: "a__y", N: 1, Day: int32(100 + i)},
						{From: "a__x", To: fmt.Sprintf("w%d__t", w), N: 2, Day: 100},
					}); err != nil {
						errs <- err
						return
					}
				}
			}(w)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		got := list(t, s)
		if len(got) != 9 || got[0].To != "a__y" || got[0].N != 40 || got[0].Day != 104 {
			t.Fatalf("after 8×5 concurrent adds: %v (want a__x→a__y 40 on day 104, and 8 other pairs)", got)
		}
		for _, c := range got[1:] {
			if c.N != 10 {
				t.Fatalf("pair %s→%s: %d, want 10", c.From, c.To, c.N)
			}
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
