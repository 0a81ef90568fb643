package syncer

import (
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// TestCheckTools: a tool is stored only when its id splits back into its
// own (server, name), its name can name it exactly, and no other server's
// tool of this sync has the same id.
func TestCheckTools(t *testing.T) {
	now := time.Now()
	tool := func(server, name string) catalog.Tool { return FromMCP(server, mcp.Tool{Name: name}, now) }
	forged := tool("evil", "add")
	forged.ID = "evil___add" // as if evil_'s add had been stored under evil
	claims := &idClaims{owner: map[string]string{"a__x": "other"}}

	kept, refused := checkTools("evil", []catalog.Tool{tool("evil", "_add"), tool("evil", "ok"), forged, tool("evil", "bad\x00name")}, claims)
	var ids []string
	for _, k := range kept {
		ids = append(ids, k.ID)
	}
	if strings.Join(ids, ",") != "evil___add,evil__ok" {
		t.Errorf("kept %v, want evil's _add and ok", ids)
	}
	for _, want := range []string{"2 tool(s) refused", `its id "evil___add" would not split back into server "evil" and tool "add"`, "control character"} {
		if !strings.Contains(refused, want) {
			t.Errorf("refused = %q, want it to contain %q", refused, want)
		}
	}

	kept, refused = checkTools("a", []catalog.Tool{tool("a", "x"), tool("a", "y")}, claims)
	if len(kept) != 1 || kept[0].ID != "a__y" || !strings.Contains(refused, `its id "a__x" is also the id of a tool of server "other"`) {
		t.Errorf("collision: kept %+v, refused %q", kept, refused)
	}
	if kept, refused := checkTools("b", []catalog.Tool{tool("b", "z")}, claims); len(kept) != 1 || refused != "" {
		t.Errorf("a clean list: kept %d, refused %q", len(kept), refused)
	}
}
