package syncer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// docs is a Reader over fixed documents (the DynamoDB one is exercised
// through pkg/awsrt's tests against DynamoDB Local).
type docs map[string]json.RawMessage

func (d docs) Surfaces(context.Context) (map[string]json.RawMessage, error) { return d, nil }

func TestStoredLoad(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	echo := json.RawMessage(`{"prompts":[{"name":"greet"}],"listed_at":"2026-01-01T00:00:00Z"}`)
	var s StoredSurfaces
	steps := []struct {
		name        string
		store       docs
		wantChanged bool
		wantPrompts map[string]int // server → prompts; absent: none stored
	}{
		{"first load", docs{"echo": echo}, true, map[string]int{"echo": 1}},
		{"same documents", docs{"echo": echo}, false, map[string]int{"echo": 1}},
		{"damaged document dropped", docs{"echo": echo, "bad": json.RawMessage(`{`)}, true, map[string]int{"echo": 1}},
		{"server gone", docs{}, true, map[string]int{}},
	}
	for _, st := range steps {
		changed, err := s.Load(ctx, st.store, log)
		if err != nil || changed != st.wantChanged {
			t.Fatalf("%s: Load = %v, %v; want %v, nil", st.name, changed, err, st.wantChanged)
		}
		for _, id := range []string{"echo", "bad"} {
			got, ok, _ := s.Surface(ctx, id)
			want, wantOK := st.wantPrompts[id]
			if ok != wantOK || len(got.Prompts) != want {
				t.Errorf("%s: Surface(%q) = %d prompts, ok %v; want %d, %v", st.name, id, len(got.Prompts), ok, want, wantOK)
			}
		}
	}
}

func TestStoredSetDown(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := docs{"echo": json.RawMessage(`{"prompts":[{"name":"greet"}]}`)}
	var s StoredSurfaces
	if _, err := s.Load(ctx, store, log); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name              string
		down              []string
		wantSet, wantLoad bool // SetDown's and the next Load's "changed"
		wantEchoOK        bool
	}{
		{"echo marked down", []string{"echo"}, true, true, false},
		{"same set", []string{"echo"}, false, false, false},
		{"echo up again", nil, true, true, true},
	}
	for _, st := range steps {
		if got := s.SetDown(st.down); got != st.wantSet {
			t.Errorf("%s: SetDown = %v, want %v", st.name, got, st.wantSet)
		}
		if changed, err := s.Load(ctx, store, log); err != nil || changed != st.wantLoad {
			t.Errorf("%s: Load = %v, %v; want %v, nil", st.name, changed, err, st.wantLoad)
		}
		if _, ok, _ := s.Surface(ctx, "echo"); ok != st.wantEchoOK {
			t.Errorf("%s: Surface(echo) ok = %v, want %v", st.name, ok, st.wantEchoOK)
		}
	}
}

// surfaceDocs is a SurfaceWriter in memory.
type surfaceDocs struct {
	mu   sync.Mutex
	docs map[string]json.RawMessage
}

func (s *surfaceDocs) SetSurface(_ context.Context, id string, doc json.RawMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.docs[id] = doc
	return nil
}

// SyncSurfaces lists at most parallel servers at once, and a server that
// cannot be listed stops no other.
func TestSyncSurfacesBoundedAndIndependent(t *testing.T) {
	s := mcpserver.NewMCPServer("fixture", "1.0", mcpserver.WithPromptCapabilities(false))
	s.AddPrompt(mcp.NewPrompt("greet"), func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return mcp.NewGetPromptResult("", nil), nil
	})
	h := mcpserver.NewStreamableHTTPServer(s)
	var inflight testenv.InFlight
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/broken" {
			http.Error(w, "no such server", http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"method":"prompts/list"`)) {
			defer inflight.Enter()()
			time.Sleep(100 * time.Millisecond) // long enough for the servers listed at once to overlap
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)
	log := slog.New(slog.DiscardHandler)
	tests := []struct {
		name     string
		servers  int
		parallel int
		wantMax  int32
	}{
		{"one at a time", 3, 1, 1},
		{"two at a time", 6, 2, 2},
		{"fewer servers than the bound", 2, 8, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inflight.Reset()
			cfgs := map[string]upstream.ServerConfig{"broken": {Transport: upstream.TransportStreamableHTTP, URL: up.URL + "/broken"}}
			for i := range tc.servers {
				cfgs[fmt.Sprintf("s%d", i)] = upstream.ServerConfig{Transport: upstream.TransportStreamableHTTP, URL: up.URL + "/mcp"}
			}
			mgr := upstream.NewManager(upstream.Options{CallTimeout: 5 * time.Second, Logger: log})
			t.Cleanup(func() { mgr.Close() })
			mgr.SetServers(cfgs)
			reg := &surfaceDocs{docs: map[string]json.RawMessage{}}
			failed := SyncSurfaces(context.Background(), mgr, reg, cfgs, tc.parallel, 5*time.Second, log)
			if len(failed) != 1 || failed["broken"] == "" {
				t.Errorf("failed = %v, want only the broken server", failed)
			}
			if len(reg.docs) != tc.servers {
				t.Errorf("%d surfaces stored, want one per working server (%d): the broken one must not stop the others", len(reg.docs), tc.servers)
			}
			for id, doc := range reg.docs {
				if !bytes.Contains(doc, []byte(`"greet"`)) {
					t.Errorf("%s: stored %s, want the prompt greet", id, doc)
				}
			}
			if m := inflight.Max(); m != tc.wantMax {
				t.Errorf("%d servers listed at once, want %d", m, tc.wantMax)
			}
		})
	}
}
