package dynamo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/catalog/storetest"
)

func newToolStore(t testing.TB) (*ToolStore, *dynamodb.Client, string) {
	t.Helper()
	c, tb := testTables(t, "tools")
	s := NewToolStore(c, tb.Tools)
	s.Metrics = testMetrics
	return s, c, tb.Tools
}

func TestToolStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) catalog.Store {
		s, _, _ := newToolStore(t)
		return s
	})
}

// Small pages force every Query and Scan over many pages.
func TestToolStoreConformancePaged(t *testing.T) {
	storetest.Run(t, func(t *testing.T) catalog.Store {
		s, _, _ := newToolStore(t)
		s.pageSize = 7
		return s
	})
}

// One segment: the sequential Scan.
func TestToolStoreConformanceSequential(t *testing.T) {
	storetest.Run(t, func(t *testing.T) catalog.Store {
		s, _, _ := newToolStore(t)
		s.ScanSegments = 1
		return s
	})
}

// TestParallelScanSameCatalog: ListTools and ListServers give the same
// catalog with 1, 3 and 8 segments (and small pages) over many servers.
func TestParallelScanSameCatalog(t *testing.T) {
	s, _, _ := newToolStore(t)
	for i := range 40 {
		id := fmt.Sprintf("srv%02d", i)
		var tools []catalog.Tool
		for j := range 4 {
			tl := catalog.Tool{Server: id, Name: fmt.Sprintf("tool_%d", j), Description: fmt.Sprintf("tool %d of %s", j, id)}
			catalog.Finalize(&tl)
			tools = append(tools, tl)
		}
		replaceOK(t, s, id, tools)
	}
	list := func(segments int, page int32) string {
		s.ScanSegments, s.pageSize = segments, page
		tools, err := s.ListTools(context.Background())
		if err != nil {
			t.Fatalf("%d segments: %v", segments, err)
		}
		servers, err := s.ListServers(context.Background())
		if err != nil {
			t.Fatalf("%d segments: %v", segments, err)
		}
		var b strings.Builder
		for _, tl := range tools {
			b.WriteString(tl.ID + "|")
		}
		fmt.Fprintf(&b, "%d servers", len(servers))
		return b.String()
	}
	want := list(1, 0)
	if !strings.HasSuffix(want, "40 servers") || strings.Count(want, "|") != 160 {
		t.Fatalf("sequential scan: %s", want)
	}
	for _, c := range []struct {
		segments int
		page     int32
	}{{3, 0}, {8, 0}, {8, 5}} {
		if got := list(c.segments, c.page); got != want {
			t.Errorf("%d segments, page %d:\n got %s\nwant %s", c.segments, c.page, got, want)
		}
	}
}

func replaceOK(t *testing.T, s catalog.Store, id string, tools []catalog.Tool) (changed, deleted []string) {
	t.Helper()
	changed, deleted, err := s.ReplaceServerTools(context.Background(), catalog.Server{ID: id}, tools)
	if err != nil {
		t.Fatal(err)
	}
	return changed, deleted
}

func descriptions(t *testing.T, s catalog.Store) map[string]string {
	t.Helper()
	got, err := s.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tool := range got {
		out[tool.ID] = tool.Description
	}
	return out
}

// A writer that loses the compare-and-set of the meta item re-reads and
// retries, and its answer reflects the state it finally wrote over.
func TestReplaceConflictRetried(t *testing.T) {
	ctx := context.Background()
	s, c, table := newToolStore(t)
	other := NewToolStore(c, table)
	tools := storetest.Tools("srv", "t", 5, "v1")
	replaceOK(t, s, "srv", tools)

	var fired atomic.Int32
	s.beforeCommit = func(id string) {
		if fired.Add(1) == 1 {
			if err := other.MarkServerStale(ctx, id, "probe failed"); err != nil {
				t.Error(err)
			}
		}
	}
	before := testMetrics.Conflicts.Load()
	next := append(storetest.Tools("srv", "t", 5, "v1"), storetest.Tool("srv", "extra", "new"))
	changed, deleted := replaceOK(t, s, "srv", next)
	if fired.Load() < 2 {
		t.Fatalf("the write was not retried (hook fired %d times)", fired.Load())
	}
	if testMetrics.Conflicts.Load() == before {
		t.Fatal("conflict not counted")
	}
	// The retry saw the stale mark, so every kept tool is reported as changed.
	if len(changed) != 6 || len(deleted) != 0 {
		t.Fatalf("changed %v deleted %v; want all 6 changed", changed, deleted)
	}
	got, err := s.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range got {
		if tool.Status != catalog.StatusActive {
			t.Fatalf("%s is %s after the retried replace", tool.ID, tool.Status)
		}
	}
}

func TestReplaceConflictGivesUp(t *testing.T) {
	ctx := context.Background()
	s, c, table := newToolStore(t)
	other := NewToolStore(c, table)
	replaceOK(t, s, "srv", storetest.Tools("srv", "t", 3, "v1"))
	s.beforeCommit = func(id string) {
		if err := other.MarkServerStale(ctx, id, "again"); err != nil {
			t.Error(err)
		}
	}
	_, _, err := s.ReplaceServerTools(ctx, catalog.Server{ID: "srv"}, storetest.Tools("srv", "t", 3, "v2"))
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("err = %v, want ErrConflict", err)
	}
	for id, d := range descriptions(t, other) {
		if !strings.HasPrefix(d, "v1") {
			t.Fatalf("%s = %q: a failed replace changed data", id, d)
		}
	}
}

// Several instances replace the same server at once, with changes small
// and large (staged). Every call succeeds and the result is exactly one
// of the lists.
func TestConcurrentSameServer(t *testing.T) {
	s, c, table := newToolStore(t)
	lists := [][]catalog.Tool{
		storetest.Tools("srv", "t", 150, "list-a"),
		storetest.Tools("srv", "t", 20, "list-b"),
		storetest.Tools("srv", "u", 120, "list-c"),
		storetest.Tools("srv", "t", 3, "list-d"),
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(lists))
	for _, l := range lists {
		wg.Add(1)
		go func(l []catalog.Tool) {
			defer wg.Done()
			inst := NewToolStore(c, table)
			if _, _, err := inst.ReplaceServerTools(context.Background(), catalog.Server{ID: "srv"}, l); err != nil {
				errs <- err
			}
		}(l)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := descriptions(t, s)
	var matched string
	for _, l := range lists {
		gen := strings.Fields(l[0].Description)[0]
		if len(got) != len(l) {
			continue
		}
		ok := true
		for _, tool := range l {
			if got[tool.ID] != tool.Description {
				ok = false
			}
		}
		if ok {
			matched = gen
		}
	}
	if matched == "" {
		t.Fatalf("final state (%d tools) is none of the lists", len(got))
	}
	for _, it := range rawItems(t, c, table) {
		if strings.HasPrefix(getS(it, attrSK), stagePrefix) {
			t.Fatalf("stage item left behind: %s", getS(it, attrSK))
		}
	}
}

// A writer that dies right after publishing a staged change: readers
// already see the whole new list, and the next writer on any instance
// finishes moving it into place.
func TestCrashAfterPublish(t *testing.T) {
	ctx := context.Background()
	s, c, table := newToolStore(t)
	old := storetest.Tools("srv", "t", 200, "old")
	replaceOK(t, s, "srv", old)
	next := append(storetest.Tools("srv", "t", 150, "new"), storetest.Tools("srv", "n", 30, "added")...)
	s.afterFlip = func(string) error { return errors.New("simulated crash") }
	if _, _, err := s.ReplaceServerTools(ctx, catalog.Server{ID: "srv"}, next); err == nil {
		t.Fatal("the simulated crash was not reported")
	}
	reader := NewToolStore(c, table)
	check := func(when string) {
		got := descriptions(t, reader)
		if len(got) != len(next) {
			t.Fatalf("%s: %d tools visible, want %d", when, len(got), len(next))
		}
		for _, tool := range next {
			if got[tool.ID] != tool.Description {
				t.Fatalf("%s: %s = %q, want %q", when, tool.ID, got[tool.ID], tool.Description)
			}
		}
		for _, id := range []string{"srv__t000", "srv__n005"} {
			tool, err := reader.GetTool(ctx, id)
			if err != nil || !strings.HasPrefix(tool.Description, map[bool]string{true: "new", false: "added"}[strings.HasPrefix(id, "srv__t")]) {
				t.Fatalf("%s: GetTool(%s) = %q, %v", when, id, tool.Description, err)
			}
		}
		if _, err := reader.GetTool(ctx, "srv__t170"); !errors.Is(err, catalog.ErrNotFound) {
			t.Fatalf("%s: a removed tool is readable: %v", when, err)
		}
	}
	check("after the crash")
	staged := 0
	for _, it := range rawItems(t, c, table) {
		if strings.HasPrefix(getS(it, attrSK), stagePrefix) {
			staged++
		}
	}
	if staged == 0 {
		t.Fatal("the crash left no staged change: the test does not exercise roll-forward")
	}

	changed, deleted := replaceOK(t, reader, "srv", next)
	if len(changed) != 0 || len(deleted) != 0 {
		t.Fatalf("replace after roll-forward: changed %d deleted %d, want none (already published)", len(changed), len(deleted))
	}
	check("after roll-forward")
	tools := 0
	for _, it := range rawItems(t, c, table) {
		sk := getS(it, attrSK)
		if strings.HasPrefix(sk, stagePrefix) {
			t.Fatalf("stage item %s left after roll-forward", sk)
		}
		if strings.HasPrefix(sk, toolPrefix) {
			tools++
		}
		if sk == metaSK && getS(it, "applying") != "" {
			t.Fatal("meta still marks a change being applied")
		}
	}
	if tools != len(next) {
		t.Fatalf("%d tool items after roll-forward, want %d", tools, len(next))
	}
}

// While one writer swaps a large server between two complete lists, readers
// see exactly one list each time, never a mix.
func TestReadersSeeAllOrNothing(t *testing.T) {
	ctx := context.Background()
	s, c, table := newToolStore(t)
	gens := [][]catalog.Tool{storetest.Tools("big", "t", 200, "gen-a"), storetest.Tools("big", "t", 150, "gen-b")}
	replaceOK(t, s, "big", gens[0])
	rereads := testMetrics.Rereads.Load()

	stop := make(chan struct{})
	var reads atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for r := 0; r < 1; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reader := NewToolStore(c, table)
			reader.Metrics = testMetrics
			reader.pageSize = 50 // many pages: more chances to interleave with a write
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := reader.ListTools(ctx)
				if err != nil {
					errs <- err
					return
				}
				reads.Add(1)
				gen := ""
				for _, tool := range got {
					g := strings.Fields(tool.Description)[0]
					if gen == "" {
						gen = g
					}
					if g != gen {
						errs <- fmt.Errorf("a read mixed %s and %s", gen, g)
						return
					}
				}
				want := map[string]int{"gen-a": 200, "gen-b": 150}[gen]
				if len(got) != want {
					errs <- fmt.Errorf("a read saw %d tools of %s, want %d", len(got), gen, want)
					return
				}
			}
		}()
	}
	for i := 1; i <= 4; i++ {
		start := time.Now()
		replaceOK(t, s, "big", gens[i%2])
		t.Logf("replace %d took %v", i, time.Since(start))
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if reads.Load() == 0 {
		t.Fatal("no reads ran")
	}
	t.Logf("%d consistent reads during 4 large replaces; %d re-reads after a write interleaved", reads.Load(), testMetrics.Rereads.Load()-rereads)
}

// An item changed behind the gateway's back is detected, and the next
// replace repairs the server.
func TestInconsistencyDetectedAndRepaired(t *testing.T) {
	ctx := context.Background()
	s, c, table := newToolStore(t)
	tools := storetest.Tools("srv", "t", 4, "x")
	replaceOK(t, s, "srv", tools)
	if _, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table),
		Key: item{attrPK: avS("server#srv"), attrSK: avS("tool#t002")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListTools(ctx); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("ListTools over a hand-edited table: %v, want ErrInconsistent", err)
	}
	changed, _ := replaceOK(t, s, "srv", tools)
	if len(changed) != 4 {
		t.Fatalf("repairing replace reported %d changed, want 4", len(changed))
	}
	if got := descriptions(t, s); len(got) != 4 {
		t.Fatalf("after repair: %d tools", len(got))
	}
}

func TestToolTooLarge(t *testing.T) {
	s, _, _ := newToolStore(t)
	big := storetest.Tool("srv", "huge", strings.Repeat("x", 410<<10))
	_, _, err := s.ReplaceServerTools(context.Background(), catalog.Server{ID: "srv"}, []catalog.Tool{big})
	if err == nil || !strings.Contains(err.Error(), "400 KB") {
		t.Fatalf("err = %v, want a 400 KB item limit error", err)
	}
}

func newBenchStore(b *testing.B) catalog.Store {
	s, _, _ := newToolStore(b)
	return s
}

func BenchmarkDynamoReplaceServerTools(b *testing.B) {
	storetest.BenchmarkReplaceServerTools(b, newBenchStore)
}

func BenchmarkDynamoGetTool(b *testing.B) { storetest.BenchmarkGetTool(b, newBenchStore) }

func BenchmarkDynamoListTools3000(b *testing.B) {
	s, _, _ := newToolStore(b)
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		id := fmt.Sprintf("srv%d", i)
		if _, _, err := s.ReplaceServerTools(ctx, catalog.Server{ID: id}, storetest.Tools(id, "tool", 300, "a tool")); err != nil {
			b.Fatal(err)
		}
	}
	for _, segments := range []int{1, DefaultScanSegments} {
		b.Run(fmt.Sprintf("segments=%d", segments), func(b *testing.B) {
			s.ScanSegments = segments
			for b.Loop() {
				if got, err := s.ListTools(ctx); err != nil || len(got) != 3000 {
					b.Fatal(len(got), err)
				}
			}
		})
	}
}

// A segment of a parallel scan that fails cancels the others: ListTools
// returns its error without waiting for them.
func TestParallelScanFirstFailureCancelsTheRest(t *testing.T) {
	tests := []struct {
		name     string
		segments int
		fail     string // the Segment field of the Scan the proxy refuses
	}{
		{"first of two", 2, `"Segment":0`},
		{"middle of four", 4, `"Segment":2`},
		{"last of eight", 8, `"Segment":7`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _, _ := newToolStore(t)
			var scans atomic.Int32
			c := proxyClient(t, nil, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
				if operation(r) != "Scan" {
					return false
				}
				scans.Add(1)
				if !bytes.Contains(body, []byte(tc.fail)) {
					select {
					case <-r.Context().Done(): // the client gave up on this segment
					case <-time.After(10 * time.Second):
					}
					return true
				}
				time.Sleep(20 * time.Millisecond) // let the other segments start
				writeAPIError(w, "com.amazon.coral.validate#ValidationException", "injected failure")
				return true
			})
			s.client, s.ScanSegments = c, tc.segments
			start := time.Now()
			_, err := s.ListTools(context.Background())
			if err == nil || !strings.Contains(err.Error(), "injected failure") {
				t.Fatalf("err = %v, want the failed segment's error", err)
			}
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("ListTools took %v: the other segments were not cancelled", elapsed)
			}
			if n := scans.Load(); n != int32(tc.segments) {
				t.Errorf("%d Scan requests, want one per segment (%d)", n, tc.segments)
			}
		})
	}
}
