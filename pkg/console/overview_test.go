package console

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/metrics/usage"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/syncer"
)

// TestOverview: the first page's endpoint says what is connected, the
// catalog size, the recent calls and errors, the servers with a problem,
// and how retrievals matched.
func TestOverview(t *testing.T) {
	c, rec := testConsole(t)
	rec.ToolCall("agent", "a__tool000", usage.OK, 3*time.Millisecond)
	rec.ToolCall("agent", "b__tool001", "upstream_error", 9*time.Millisecond)
	rec.Retrieval("agent", usage.FindTools, []string{usage.Strong})
	rec.Retrieval("agent", usage.REST, []string{usage.Weak})
	admin := policy.For(policy.Key{ID: "root", Admin: true})
	w, body := do(t, c.Admin(), &admin, "GET", "/tool-rag/admin/overview", "")
	if w.Code != http.StatusOK {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if body["tools"] != float64(250) || fmt.Sprint(body["counts"]) != "map[down:1 up:1]" {
		t.Errorf("tools %v, counts %v", body["tools"], body["counts"])
	}
	calls, _ := body["recent_calls"].([]any)
	errs, _ := body["recent_errors"].([]any)
	if len(calls) != 2 || len(errs) != 1 || !strings.Contains(fmt.Sprint(errs[0]), "b__tool001") || !strings.Contains(fmt.Sprint(calls[0]), "b__tool001") {
		t.Errorf("recent calls %v, errors %v", calls, errs)
	}
	probs := fmt.Sprint(body["server_problems"])
	if !strings.Contains(probs, "exit 1") || strings.Contains(probs, "server:a") {
		t.Errorf("server problems %s", probs)
	}
	ret := fmt.Sprint(body["retrievals"])
	if !strings.Contains(ret, "requests:2") || !strings.Contains(ret, "weak_share:0.5") {
		t.Errorf("retrievals %s", ret)
	}
	// The usage page has the timeline and the retrieval counts too.
	_, u := do(t, c.Admin(), &admin, "GET", "/tool-rag/admin/usage", "")
	if tl, _ := u["timeline"].([]any); len(tl) != 1 || !strings.Contains(fmt.Sprint(tl[0]), "calls:2") {
		t.Errorf("timeline %v", u["timeline"])
	}
	if !strings.Contains(fmt.Sprint(u["retrievals"]), "find_tools:1") {
		t.Errorf("usage retrievals %v", u["retrievals"])
	}
}

func TestSyncSummary(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{syncer.Report{Servers: 3, Synced: 2, Changed: 5, Deleted: 1, Duration: 1234 * time.Millisecond,
			Stale: map[string]string{"web": "connect https://u:secret@x.example/mcp: connection refused"}},
			"Synced 2 of 3 servers in 1.2 s; 5 tools changed, 1 tool removed. Not reached (their tools are kept, marked stale): web (connect https://x.example/mcp: connection refused)."},
		{syncer.Report{Servers: 1, Synced: 1, Duration: 85 * time.Millisecond, Removed: []string{"old"}},
			"Synced 1 of 1 server in 85 ms; 0 tools changed, 0 tools removed. No longer in the registry: old."},
		{map[string]any{"status": "triggered", "took_ns": 2500000000}, "Done: status triggered, took 2.5 s."},
		{"triggered asynchronously", "Done: triggered asynchronously."},
	} {
		got := SyncSummary(c.in)
		if strings.Contains(c.want, "x.example") {
			// credentials are removed from URLs; the exact wording is redact's
			if !strings.HasPrefix(got, "Synced 2 of 3 servers in 1.2 s; 5 tools changed, 1 tool removed. Not reached") || strings.Contains(got, "secret") {
				t.Errorf("SyncSummary = %q", got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("SyncSummary(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
