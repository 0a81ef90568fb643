package loadtest

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

func TestSplit(t *testing.T) {
	tools := []BenchTool{
		{Server: "b", Name: "x"}, {Server: "a", Name: "x"}, {Server: "c", Name: "y"},
		{Server: "a", Name: "z"}, {Server: "e", Name: "x"}, {Server: "e", Name: "x"},
	}
	got := Split(tools, 2)
	names := func(ts []UpstreamTool) string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Name)
		}
		return strings.Join(out, ",")
	}
	// Servers sorted a, b, c, e are dealt to upstreams 0, 1, 0, 1; a name
	// repeated on one upstream gets its server as a prefix; the duplicate
	// tool of e is dropped.
	if len(got) != 2 || names(got[0]) != "x,z,y" || names(got[1]) != "x,e_x" {
		t.Fatalf("Split = %q / %q", names(got[0]), names(got[1]))
	}
	if string(got[0][0].InputSchema) != `{"type":"object"}` {
		t.Errorf("a tool without a schema gets an empty object schema, got %s", got[0][0].InputSchema)
	}
	if Split(tools, 0) != nil {
		t.Error("Split over 0 upstreams")
	}
}

func TestSampleArgs(t *testing.T) {
	cases := []struct {
		schema string
		want   string // JSON of the arguments; "" = not callable
	}{
		{`{"type":"object"}`, `{}`},
		{`{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"}},"required":["q","n"]}`, `{"n":1,"q":"x"}`},
		{`{"type":"object","properties":{"u":{"type":"string","enum":["c","f"]},"d":{"type":"number","default":5}},"required":["u","d"]}`, `{"d":5,"u":"c"}`},
		{`{"type":"object","properties":{"l":{"type":"array","minItems":2,"items":{"type":"number"}},"b":{"type":"boolean"}},"required":["l","b"]}`, `{"b":true,"l":[1,1]}`},
		{`{"type":"object","properties":{"o":{"type":"object","properties":{"k":{"type":"string"}},"required":["k"]}},"required":["o"]}`, `{"o":{"k":"x"}}`},
		{`{"type":"object","properties":{"v":{"anyOf":[{"type":"integer"},{"type":"null"}]}},"required":["v"]}`, `{"v":1}`},
		{`{"type":"object","properties":{"p":{"type":"string","pattern":"^[0-9]+$"}},"required":["p"]}`, ``},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"number","minimum":3}},"required":["n"]}`, `{"n":3}`},
		{`not json`, ``},
	}
	for _, c := range cases {
		args, ok := SampleArgs(json.RawMessage(c.schema))
		b, _ := json.Marshal(args)
		if c.want == "" {
			if ok {
				t.Errorf("%s: callable with %s, want left out", c.schema, b)
			}
			continue
		}
		if !ok || string(b) != c.want {
			t.Errorf("%s: %s ok=%v, want %s", c.schema, b, ok, c.want)
		}
	}
}

func TestCannedAnswer(t *testing.T) {
	if got := CannedAnswer("t", map[string]any{"b": 1.0, "a": "x"}); got != `t ok {"a":"x","b":1}` {
		t.Errorf("CannedAnswer = %q", got)
	}
}

// TestRun is a small bounded run against the real local gateway: zero
// errors, every operation exercised, goroutines back to the starting
// level after teardown.
func TestRun(t *testing.T) {
	shared := testenv.SharedDir(t)
	echo := filepath.Join(t.TempDir(), "echo")
	cmd := exec.Command("go", "build", "-o", echo, "./servers/echo")
	cmd.Dir = testenv.Root(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build servers/echo: %v\n%s", err, out)
	}
	rep, err := Run(context.Background(), Config{
		BenchDirs:       []string{filepath.Join(shared, "bench", "livemcpbench"), filepath.Join(shared, "bench", "stabletoolbench")},
		Upstreams:       4,
		Stdio:           1,
		EchoCommand:     []string{echo},
		Clients:         8,
		Duration:        20 * time.Second,
		MaxOpsPerClient: 40,
		MaxTools:        300,
	})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rep.WriteTable(&out)
	t.Log("\n" + out.String())
	if rep.Tools != 305 || rep.Callable < 200 {
		t.Errorf("tools %d (want 300 + 5 stdio), callable %d", rep.Tools, rep.Callable)
	}
	if rep.Total.Errors != 0 || rep.Total.Count != 8*40 {
		t.Errorf("total: %+v, want %d operations without errors; samples %v", rep.Total, 8*40, rep.ErrorSamples)
	}
	seen := map[string]int{}
	for _, op := range rep.Ops {
		seen[op.Op] = op.Count
		if op.Errors != 0 || op.P50 <= 0 || op.P99 < op.P50 || op.Max < op.P99 {
			t.Errorf("%s: %+v", op.Op, op)
		}
	}
	for _, op := range []string{OpConnect, OpFind, OpDescribe, OpRun, OpRunMany} {
		if seen[op] == 0 {
			t.Errorf("no %s operations", op)
		}
	}
	if seen[OpConnect] != 8 {
		t.Errorf("%d connects, want 8", seen[OpConnect])
	}
	if rep.Peak.Goroutines < rep.Ready.Goroutines || rep.Peak.HWMBytes < rep.Ready.RSSBytes {
		t.Errorf("peak %+v below ready %+v", rep.Peak, rep.Ready)
	}
	if rep.AfterTeardown.Goroutines > rep.Start.Goroutines+5 {
		t.Errorf("goroutines leaked: %d at start, %d after teardown", rep.Start.Goroutines, rep.AfterTeardown.Goroutines)
	}
}
