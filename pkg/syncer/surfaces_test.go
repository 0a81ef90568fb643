package syncer

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
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
