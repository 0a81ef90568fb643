package dynamo

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/catalog/storetest"
)

// The attributes of the tools table's items as the previous release
// (before catalog.Tool.Extra) writes and reads them, with their types.
var (
	prevToolAttrs = map[string]string{attrPK: "S", attrSK: "S", "tool_id": "S", "server_id": "S", "name": "S", "title": "S",
		"description": "S", "tool_type": "S", "permission_scope": "S", "content_hash": "S", "updated_at": "S",
		"input_schema": "S", "annotations": "S", "tags": "L"}
	prevMetaAttrs = map[string]string{attrPK: "S", attrSK: "S", "server_id": "S", "title": "S", "description": "S", "status": "S",
		"last_error": "S", "synced_at": "S", "version": "N", "digest": "S", "tool_count": "N"}
)

func avType(v any) string {
	s := fmt.Sprintf("%T", v) // *types.AttributeValueMemberS
	return s[len(s)-1:]
}

// TestFidelityToolItemsReadableByPreviousRelease: during a rollout, the
// items this release writes hold every attribute the previous release
// reads, with the same type, and add only "extra" (which that release
// ignores); the items the previous release writes (no "extra") decode
// here as the same tool without Extra.
func TestFidelityToolItemsReadableByPreviousRelease(t *testing.T) {
	tool := storetest.Tool("wx", "forecast", "Weather forecast")
	tool.Extra = json.RawMessage(`{"outputSchema":{"type":"object"},"futureField":1}`)
	catalog.Finalize(&tool)
	for _, c := range []struct {
		what string
		it   item
		prev map[string]string
	}{
		{"tool", encodeTool(tool, "tool#forecast"), prevToolAttrs},
		{"server", encodeMeta(toolMeta{srv: catalog.Server{ID: "wx", Title: "Weather", Extra: json.RawMessage(`{"instructions":"x"}`)}, version: 3, digest: "d", count: 1}), prevMetaAttrs},
	} {
		for k, typ := range c.prev {
			if v, ok := c.it[k]; !ok || avType(v) != typ {
				t.Errorf("%s item: attribute %q the previous release reads is %T, want type %s", c.what, k, v, typ)
			}
		}
		for k, v := range c.it {
			if _, known := c.prev[k]; !known && (k != "extra" || avType(v) != "S") {
				t.Errorf("%s item: attribute %q (%T) is new besides extra: check the previous release ignores it", c.what, k, v)
			}
		}
	}

	// An item the previous release wrote: this one without "extra".
	old := encodeTool(tool, "tool#forecast")
	delete(old, "extra")
	got, err := decodeTool(old)
	if err != nil {
		t.Fatal(err)
	}
	want := tool
	want.Extra = nil
	if !reflect.DeepEqual(got.Extra, want.Extra) || got.Name != want.Name || string(got.InputSchema) != string(want.InputSchema) ||
		!reflect.DeepEqual(got.Tags, want.Tags) || got.ContentHash != want.ContentHash {
		t.Errorf("the previous release's item decodes as %+v, want %+v", got, want)
	}
	if got, err := decodeTool(encodeTool(tool, "tool#forecast")); err != nil || string(got.Extra) != string(tool.Extra) {
		t.Errorf("this release's item: %v %s", err, got.Extra)
	}
}
