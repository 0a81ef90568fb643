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
