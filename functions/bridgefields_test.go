package functions_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/awsrt"
	"github.com/toolrag/mcp-gateway/pkg/bridge"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// TestFidelityBridgeUnknownFields: a stdio server's tools keep every
// member on AWS, the ones no MCP library knows included (a top-level
// "x-future", unknown keys inside annotations, execution and icons, icons,
// _meta, schema keywords): stdio server → toolrag bridge → the sync
// function (aws-lambda-rie) → the DynamoDB Local tools table → the gateway
// function's tools/list and describe_tool, compared as JSON after the
// gateway's namespacing.
func TestFidelityBridgeUnknownFields(t *testing.T) {
	rie, bins := emulated(t, "sync", "gateway")
	ctx := context.Background()
	d := newDeployment(t)
	lists := filepath.Join(testenv.Root(t), "pkg", "bridge", "testdata", "rawserver", "lists.json")
	startBridge(t, d, bridge.Config{Command: testenv.GoBinary(t, "./pkg/bridge/testdata/rawserver"), Args: []string{"-lists", lists}, Name: "raw"})
	const secret = "k-fidelity-bridge"
	if err := dynamo.NewKeyStore(d.ddb, d.tables.Keys).Create(ctx, policy.Key{ID: "fidelity", SecretHash: policy.HashSecret(secret), Admin: true,
		Servers: map[string]policy.Rule{"raw": {}}}); err != nil {
		t.Fatal(err)
	}

	syncFn := startFunction(t, rie, "toolrag-sync", bins["sync"], 900, d.env)
	var rep awsrt.SyncReport
	if err := json.Unmarshal(syncFn.invoke(t, sample(t, "schedule-sync.json")), &rep); err != nil || rep.IndexErr != "" || len(rep.Sync.Stale) > 0 {
		t.Fatalf("sync report: %v %+v", err, rep)
	}

	gw := startFunction(t, rie, "toolrag-gateway", bins["gateway"], 29, d.env)
	r := decodeHTTP(t, gw.invoke(t, mcpEvent(t, secret, "",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`)))
	sid := r.header("Mcp-Session-Id")
	if r.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", r.StatusCode, r.Body)
	}
	listed := toolsOf(t, decodeHTTP(t, gw.invoke(t, mcpEvent(t, secret, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))), 2)

	raw, err := os.ReadFile(lists)
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(raw, &sent); err != nil {
		t.Fatal(err)
	}
	unknown := 0
	for i, want := range sent.Tools {
		name := want["name"].(string)
		want["name"] = "raw__" + name
		if want["x-future"] != nil {
			unknown++
		}
		got, ok := listed["raw__"+name]
		if !ok {
			t.Errorf("tools/list on Lambda lacks raw__%s", name)
			continue
		}
		testenv.SameTool(t, "tools/list on Lambda", got, want)

		call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"describe_tool","arguments":{"call_name":"raw__` + name + `"}}}`
		var described struct {
			StructuredContent struct {
				Tool map[string]any `json:"tool"`
			} `json:"structuredContent"`
		}
		if err := json.Unmarshal(rpcResult(t, decodeHTTP(t, gw.invoke(t, mcpEvent(t, secret, sid, call))), 3), &described); err != nil {
			t.Fatal(err)
		}
		testenv.SameJSON(t, "describe_tool on Lambda", described.StructuredContent.Tool, sent.Tools[i])
	}
	if unknown == 0 {
		t.Fatal("the fixture has no tool with unknown members: this test would prove nothing")
	}
}
