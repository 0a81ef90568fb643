package writeplan

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

func tool(server, name, desc string) catalog.Tool {
	return catalog.Tool{Server: server, Name: name, Description: desc}
}

func TestPrepare(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name    string
		srv     catalog.Server
		tools   []catalog.Tool
		wantErr string
		wantIDs []string
	}{
		{"ok sorted and filled", catalog.Server{ID: "s"}, []catalog.Tool{tool("s", "b", ""), tool("", "a", "")}, "", []string{"s__a", "s__b"}},
		{"bad server", catalog.Server{ID: "a b"}, nil, "must match", nil},
		{"foreign tool", catalog.Server{ID: "s"}, []catalog.Tool{tool("t", "a", "")}, `belongs to server "t"`, nil},
		{"no name", catalog.Server{ID: "s"}, []catalog.Tool{tool("s", "", "")}, "has no name", nil},
		{"dupe", catalog.Server{ID: "s"}, []catalog.Tool{tool("s", "a", "1"), tool("s", "a", "2")}, "twice", nil},
		{"wrong id", catalog.Server{ID: "s"}, []catalog.Tool{{Server: "s", Name: "a", ID: "s__b"}}, `has id "s__b"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]catalog.Tool(nil), tt.tools...)
			srv, got, err := Prepare(tt.srv, in, now)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, g := range got {
				ids = append(ids, g.ID)
				if g.Status != catalog.StatusActive || g.ContentHash == "" || !g.UpdatedAt.Equal(now) || g.ToolType == "" {
					t.Fatalf("not normalized: %+v", g)
				}
			}
			if !reflect.DeepEqual(ids, tt.wantIDs) {
				t.Fatalf("ids = %v, want %v", ids, tt.wantIDs)
			}
			if srv.Status != catalog.StatusActive || !srv.SyncedAt.Equal(now) {
				t.Fatalf("server not normalized: %+v", srv)
			}
			if !reflect.DeepEqual(in, tt.tools) {
				t.Fatal("Prepare modified its input")
			}
		})
	}
}

func TestDiff(t *testing.T) {
	_, next, err := Prepare(catalog.Server{ID: "s"}, []catalog.Tool{tool("s", "same", "x"), tool("s", "stale", "y"), tool("s", "edit", "new"), tool("s", "add", "z")}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	hash := map[string]string{}
	for _, tl := range next {
		hash[tl.ID] = tl.ContentHash
	}
	current := map[string]Current{
		"s__same":  {ContentHash: hash["s__same"]},
		"s__stale": {ContentHash: hash["s__stale"], Stale: true},
		"s__edit":  {ContentHash: "sha256:old"},
		"s__gone":  {ContentHash: "sha256:x"},
	}
	d := Diff(current, next)
	var written []string
	for _, w := range d.Write {
		written = append(written, w.ID)
	}
	check := func(name string, got, want []string) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("Write", written, []string{"s__add", "s__edit"})
	check("Reactivate", d.Reactivate, []string{"s__stale"})
	check("Keep", d.Keep, []string{"s__same"})
	check("Delete", d.Delete, []string{"s__gone"})
	check("Changed", d.Changed, []string{"s__add", "s__edit", "s__stale"})
}
