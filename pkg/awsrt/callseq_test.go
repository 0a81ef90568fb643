package awsrt

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
	"github.com/toolrag/mcp-gateway/pkg/callseq"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
)

// TestCallSequencesAcrossInstances: with TOOL_RAG_CALL_SEQUENCES on, one
// gateway instance counts a session's echo → reverse calls into the
// call-sequence table (DynamoDB Local); the sync function drops the pairs
// of a tool that left the catalog; another instance's cold start reads the
// counts with the catalog, and its find_tools lists reverse first under
// echo's related tools.
func TestCallSequencesAcrossInstances(t *testing.T) {
	ctx := context.Background()
	e := newTestEnv(t)
	e.tables.CallSeq = e.tables.Tools + "-callseq"
	if err := dynamo.CreateTables(ctx, e.ddb, dynamo.Tables{CallSeq: e.tables.CallSeq}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = e.ddb.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(e.tables.CallSeq)})
	})
	on := func(c *Config) { // every pair counts at once (the thresholds: pkg/callseq, pkg/local)
		c.Env.CallSequences, c.Env.CallSeqMinPrincipals, c.Env.CallSeqPrincipalDayCap = true, 1, 0
	}
	store := dynamo.NewCallSeqStore(e.ddb, e.tables.CallSeq)
	// A pair of a tool that is not in the catalog: the sync drops it.
	if err := store.AddCallSequences(ctx, []callseq.Count{{From: "echo__echo", To: "gone__tool", N: 9, Day: callseq.Day(e.clock.Now())}}); err != nil {
		t.Fatal(err)
	}

	e.register(t, "echo", startEcho(t))
	cfg := e.config(t)
	on(&cfg)
	if _, err := runSync(ctx, cfg, indexer.ModeFull); err != nil {
		t.Fatal(err)
	}
	if cs, err := store.ListCallSequences(ctx); err != nil || len(cs) != 0 {
		t.Fatalf("after the sync: %v, %v; want the pair of the gone tool dropped", cs, err)
	}

	a := e.gateway(t, on)
	h := lambdahttp.Dispatch(a, lambdahttp.Options{})
	sid := initialize(t, h, "http-api-initialize.json", devSecret)
	runAll(t, h, sid, "echo__echo", "echo__reverse", "echo__echo", "echo__reverse", "echo__echo", "echo__reverse")
	if err := a.App.FlushCallSequences(ctx); err != nil { // the background flush, now
		t.Fatal(err)
	}
	got := map[string]int64{}
	cs, err := store.ListCallSequences(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		got[c.From+">"+c.To] = c.N
	}
	if len(got) != 2 || got["echo__echo>echo__reverse"] != 3 || got["echo__reverse>echo__echo"] != 2 {
		t.Fatalf("stored counts %v", got)
	}

	b := e.gateway(t, on) // another instance, cold: it reads the counts in the background
	deadline := time.Now().Add(10 * time.Second)
	for b.App.Retriever.CallSequences().Pairs() != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the new instance loaded %d pairs, want 2", b.App.Retriever.CallSequences().Pairs())
		}
		time.Sleep(10 * time.Millisecond)
	}
	hb := lambdahttp.Dispatch(b, lambdahttp.Options{})
	sidB := initialize(t, hb, "http-api-initialize.json", devSecret)
	r := invoke(t, hb, event(t, "http-api-find-tools.json", request{session: sidB, body: findToolsBody(3, "return the given text unchanged", "")}))
	text, isErr := testenv.ResultText(t, result(t, r, 3))
	if isErr {
		t.Fatal(text)
	}
	var f struct {
		Results []struct {
			CallName string   `json:"call_name"`
			Related  []string `json:"related"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(text), &f); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(f.Results, func(x struct {
		CallName string   `json:"call_name"`
		Related  []string `json:"related"`
	}) bool {
		return x.CallName == "echo__echo"
	})
	if i < 0 || len(f.Results[i].Related) == 0 || f.Results[i].Related[0] != "echo__reverse" {
		t.Fatalf("find_tools on the new instance: %+v, want echo__reverse first under echo__echo", f.Results)
	}

	// Off (the default): an instance builds no recorder, reads nothing
	// and its sessions' calls write nothing.
	off := e.gateway(t)
	if off.App.CallSeq != nil || off.App.Retriever.CallSequences() != nil {
		t.Fatal("with TOOL_RAG_CALL_SEQUENCES off, the instance counts or reads call sequences")
	}
	ho := lambdahttp.Dispatch(off, lambdahttp.Options{})
	sidOff := initialize(t, ho, "http-api-initialize.json", devSecret)
	runAll(t, ho, sidOff, "echo__add", "echo__echo", "echo__add", "echo__echo")
	if err := off.App.FlushCallSequences(ctx); err != nil {
		t.Fatal(err)
	}
	if after, err := store.ListCallSequences(ctx); err != nil || len(after) != 2 {
		t.Fatalf("after calls on the instance with the feature off: %v, %v; want the 2 pairs counted before", after, err)
	}
}

// runAll runs each tool with run_tool in session sid through the Lambda
// handler h.
func runAll(t *testing.T, h func(context.Context, json.RawMessage) (any, error), sid string, names ...string) {
	t.Helper()
	for i, name := range names {
		args := `{"text":"hi"}`
		if name == "echo__add" {
			args = `{"a":1,"b":2}`
		}
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_tool","arguments":{"call_name":%q,"arguments":%s}}}`, 10+i, name, args)
		r := invoke(t, h, event(t, "http-api-run-tool.json", request{session: sid, body: body}))
		if text, isErr := testenv.ResultText(t, result(t, r, 10+i)); isErr {
			t.Fatalf("run_tool %s: %s", name, text)
		}
	}
}
