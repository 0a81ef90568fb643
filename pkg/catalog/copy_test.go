package catalog

import (
	"context"
	"testing"
)

// listOnly is a tool source that counts its reads.
type listOnly struct {
	tools []Tool
	reads int
}

func (l *listOnly) ListTools(context.Context) ([]Tool, error) {
	l.reads++
	return append([]Tool(nil), l.tools...), nil
}
func (l *listOnly) ListServers(context.Context) ([]Server, error) { return nil, nil }
func (l *listOnly) GetTool(context.Context, string) (Tool, error) { return Tool{}, ErrNotFound }

// TestSharedTools: a loaded Copy hands out its own slice (no copy of the
// records; an append does not reach the Copy); anything else is read
// with ListTools.
func TestSharedTools(t *testing.T) {
	ctx := context.Background()
	src := &listOnly{tools: []Tool{{ID: "a__x"}, {ID: "b__y"}}}
	c := NewCopy(src)
	got, err := SharedTools(ctx, c)
	if err != nil || len(got) != 2 || src.reads != 1 {
		t.Fatalf("unloaded copy: %d tools, %d reads of the source, err %v; want the source's 2", len(got), src.reads, err)
	}
	if err := c.Load(ctx); err != nil {
		t.Fatal(err)
	}
	reads := src.reads
	got, err = SharedTools(ctx, c)
	if err != nil || len(got) != 2 || src.reads != reads {
		t.Fatalf("loaded copy: %d tools, err %v, source read again: %v", len(got), err, src.reads != reads)
	}
	own, _, _ := c.Content()
	if &got[0] != &own[0] {
		t.Fatal("the loaded copy's tools were copied")
	}
	_ = append(got, Tool{ID: "c__z"})
	if c.Len() != 2 {
		t.Fatal("an append to the shared slice reached the copy")
	}
	if more := append(got, Tool{ID: "c__z"}); &more[0] == &own[0] {
		t.Fatal("an append to the shared slice writes into the copy's array")
	}
	if got, _ := SharedTools(ctx, src); len(got) != 2 || src.reads != reads+1 {
		t.Fatal("a plain source is not read with ListTools")
	}
}

// TestCopyLists: ListTools and ListServers read the source until the copy
// is loaded and after it is released; in between they return fresh slices
// of the copy, which a caller may change without reaching it.
func TestCopyLists(t *testing.T) {
	ctx := context.Background()
	src := &listOnly{tools: []Tool{{ID: "a__x"}}}
	c := NewCopy(src)
	if got, err := c.ListTools(ctx); err != nil || len(got) != 1 || src.reads != 1 {
		t.Fatalf("unloaded: %d tools, %d reads, err %v; want the source's", len(got), src.reads, err)
	}
	c.Set([]Tool{{ID: "b__y"}, {ID: "b__z"}}, []Server{{ID: "b"}})
	tools, err := c.ListTools(ctx)
	if err != nil || len(tools) != 2 || tools[0].ID != "b__y" || src.reads != 1 {
		t.Fatalf("loaded: tools %v, %d reads, err %v; want the copy's two", tools, src.reads, err)
	}
	servers, err := c.ListServers(ctx)
	if err != nil || len(servers) != 1 || servers[0].ID != "b" {
		t.Fatalf("loaded: servers %v, err %v; want the copy's", servers, err)
	}
	tools[0].ID, servers[0].ID = "changed", "changed"
	if again, _ := c.ListTools(ctx); again[0].ID != "b__y" {
		t.Error("a change to ListTools' slice reached the copy")
	}
	if again, _ := c.ListServers(ctx); again[0].ID != "b" {
		t.Error("a change to ListServers' slice reached the copy")
	}
	c.Release()
	if got, _ := c.ListServers(ctx); got != nil {
		t.Errorf("released: servers %v, want the source's (none)", got)
	}
	if got, _ := c.ListTools(ctx); len(got) != 1 || src.reads != 2 {
		t.Errorf("released: %d tools, %d reads; want the source's", len(got), src.reads)
	}
}
