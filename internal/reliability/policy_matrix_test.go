package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// The matrix gateway fronts servers/echo twice, as "echo" and "other".
// Each has the tools echo, add, reverse, sleep and fail, the prompt
// greeting, the resource echo://info and the template echo://items/{id}.
const matrixKeys = `keys:
  - id: admin
    secret: "sekret-admin-a1b2"
    admin: true
    servers: {echo: {}, other: {}}
  - id: full
    secret: "sekret-full-9f8e"
    servers: {echo: {}}
  - id: prefix
    secret: "sekret-prefix-7d6c"
    servers:
      echo: {tool_prefixes: ["ec", "add"], uri_prefixes: ["echo://items/"], prompt_prefixes: ["greet"]}
      other: {tool_prefixes: ["rev"], uri_prefixes: ["echo://info"], prompt_prefixes: ["nomatch"]}
  - id: nogrant
    secret: "sekret-nogrant-5b4a"
    servers: {}
  - id: hashed
    secret_hash: "sha256:a60e320e29da17914e600c5b39a6c8818926a1a1747a613a224766ae13d284ee"
    servers: {other: {}}
  - id: revoked
    secret: "sekret-revoked-e5f6"
    admin: true
    disabled: true
    servers: {echo: {}, other: {}}
  - id: limited
    secret: "sekret-limited-1357"
    servers: {echo: {}}
    rate_limit: {rate: 0.01, burst: 2}
  - id: toolsonly
    secret: "sekret-toolsonly-2468"
    servers: {echo: {tool_prefixes: ["ec"]}}
  - id: emptylists
    secret: "sekret-emptylists-8642"
    servers: {echo: {tool_prefixes: [], uri_prefixes: [], prompt_prefixes: []}}
  - id: star
    secret: "sekret-star-1122"
    servers: {other: "*"}
`

// matrixEvKey is added when server-everything runs as "ev": a key granted
// only its dynamic resources.
const matrixEvKey = `  - id: evdynamic
    secret: "sekret-evdynamic-3344"
    servers: {ev: {uri_prefixes: ["demo://resource/dynamic/"]}}
`

// secrets are every secret the tests send; none may ever appear in a log
// line, a metric or a response.
var secrets = []string{"sekret-admin-a1b2", "sekret-full-9f8e", "sekret-prefix-7d6c", "sekret-nogrant-5b4a",
	"sekret-hashed-c3d4", "sekret-revoked-e5f6", "sekret-wrong-0000", "sekret-limited-1357",
	"sekret-toolsonly-2468", "sekret-emptylists-8642", "sekret-star-1122", "sekret-evdynamic-3344"}

var (
	allTools     = []string{"echo__add", "echo__echo", "echo__fail", "echo__reverse", "echo__sleep", "other__add", "other__echo", "other__fail", "other__reverse", "other__sleep"}
	metaTools    = []string{"describe_tool", "find_tools", "plan", "run_tool", "run_tools"}
	allPrompts   = []string{"echo__greeting", "other__greeting"}
	allResources = []string{"gateway://echo/echo://info", "gateway://other/echo://info"}
	allTemplates = []string{"gateway://echo/echo://items/{id}", "gateway://other/echo://items/{id}"}
	allReadable  = []string{"gateway://echo/echo://info", "gateway://echo/echo://items/7", "gateway://other/echo://info", "gateway://other/echo://items/7"}
)

// keyCase is one kind of key with exactly what it may see and use,
// written out by hand (not derived from pkg/policy, which is under test).
type keyCase struct {
	name, secret string
	authOK       bool
	admin        bool
	tools        []string
	prompts      []string
	resources    []string
	templates    []string
	readable     []string
	needsEv      bool // the key grants server-everything ("ev")
}

var keyCases = []keyCase{
	{name: "admin", secret: "sekret-admin-a1b2", authOK: true, admin: true,
		tools: allTools, prompts: allPrompts, resources: allResources, templates: allTemplates, readable: allReadable},
	{name: "full server grant", secret: "sekret-full-9f8e", authOK: true,
		tools:     []string{"echo__add", "echo__echo", "echo__fail", "echo__reverse", "echo__sleep"},
		prompts:   []string{"echo__greeting"},
		resources: []string{"gateway://echo/echo://info"},
		templates: []string{"gateway://echo/echo://items/{id}"},
		readable:  []string{"gateway://echo/echo://info", "gateway://echo/echo://items/7"}},
	{name: "prefix grants", secret: "sekret-prefix-7d6c", authOK: true,
		tools:     []string{"echo__add", "echo__echo", "other__reverse"},
		prompts:   []string{"echo__greeting"},
		resources: []string{"gateway://other/echo://info"},
		templates: []string{"gateway://echo/echo://items/{id}"},
		readable:  []string{"gateway://echo/echo://items/7", "gateway://other/echo://info"}},
	{name: "no grant", secret: "sekret-nogrant-5b4a", authOK: true},
	{name: "hashed secret", secret: "sekret-hashed-c3d4", authOK: true,
		tools:     []string{"other__add", "other__echo", "other__fail", "other__reverse", "other__sleep"},
		prompts:   []string{"other__greeting"},
		resources: []string{"gateway://other/echo://info"},
		templates: []string{"gateway://other/echo://items/{id}"},
		readable:  []string{"gateway://other/echo://info", "gateway://other/echo://items/7"}},
	// A rule naming only tool_prefixes grants no prompt or resource, and
	// empty lists grant nothing (before, both granted every prompt and
	// resource of the server); "*" grants the whole server, like {}.
	{name: "tools only", secret: "sekret-toolsonly-2468", authOK: true,
		tools: []string{"echo__echo"}},
	{name: "empty lists", secret: "sekret-emptylists-8642", authOK: true},
	{name: "star", secret: "sekret-star-1122", authOK: true,
		tools:     []string{"other__add", "other__echo", "other__fail", "other__reverse", "other__sleep"},
		prompts:   []string{"other__greeting"},
		resources: []string{"gateway://other/echo://info"},
		templates: []string{"gateway://other/echo://items/{id}"},
		readable:  []string{"gateway://other/echo://info", "gateway://other/echo://items/7"}},
	// Only server-everything's dynamic resources: no tool, prompt or
	// listed resource, its two dynamic templates (see canonicalSurfaces).
	{name: "ev dynamic", secret: "sekret-evdynamic-3344", authOK: true, needsEv: true,
		templates: []string{"gateway://ev/demo://resource/dynamic/blob/{resourceId}", "gateway://ev/demo://resource/dynamic/text/{resourceId}"}},
	{name: "revoked", secret: "sekret-revoked-e5f6"},
	{name: "wrong secret", secret: "sekret-wrong-0000"},
}

// toolProbe is how each tool is called and what a granted call answers.
var toolProbe = map[string]struct {
	args    map[string]any
	out     string
	isError bool // the fail tool reports a tool error by design
}{
	"echo":    {map[string]any{"text": "matrix"}, "matrix", false},
	"add":     {map[string]any{"a": 2, "b": 3}, "5", false},
	"reverse": {map[string]any{"text": "abc"}, "cba", false},
	"sleep":   {map[string]any{"ms": 1}, "slept 1 ms", false},
	"fail":    {map[string]any{"message": "asked to fail"}, "asked to fail", true},
}

// Names the gateway does not have, to compare forbidden items with.
const (
	missingTool   = "echo__nosuchtool"
	missingServer = "nosuch__echo"
	missingPrompt = "echo__nosuchprompt"
	missingURI    = "gateway://nosuch/echo://info"
)

func probeFor(id string) (map[string]any, string, bool) {
	_, name, _ := strings.Cut(id, "__")
	p, ok := toolProbe[name]
	if !ok {
		return map[string]any{"text": "x"}, "", false
	}
	return p.args, p.out, p.isError
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}

func sameSet(a, b []string) bool {
	return strings.Join(sorted(a), ",") == strings.Join(sorted(b), ",")
}

// sameAnswer reports whether the answers about a forbidden and a missing
// item are identical once each item's own name is masked.
func sameAnswer(forbidden, forbiddenName, missing, missingName string) bool {
	return strings.ReplaceAll(forbidden, forbiddenName, "<name>") == strings.ReplaceAll(missing, missingName, "<name>")
}

// checkGrants asks answer about every item of all: a granted one is passed
// to checkGranted; any other must fail and be answered exactly like each of
// the missing names.
func checkGrants(t *testing.T, all, granted []string, answer func(item string) (string, bool), checkGranted func(item, got string, ok bool), missing ...string) {
	t.Helper()
	miss := make([]string, len(missing))
	for i, name := range missing {
		miss[i], _ = answer(name)
	}
	for _, item := range all {
		got, ok := answer(item)
		if has(granted, item) {
			checkGranted(item, got, ok)
			continue
		}
		for i, name := range missing {
			if ok || !sameAnswer(got, item, miss[i], name) {
				t.Errorf("forbidden %s answers %q (ok=%v); missing %s answers %q", item, got, ok, name, miss[i])
			}
		}
	}
}

// grantedOK is checkGrants' check of a granted item that must only succeed.
func grantedOK(t *testing.T) func(item, got string, ok bool) {
	return func(item, got string, ok bool) {
		if !ok {
			t.Errorf("granted %s: %s", item, got)
		}
	}
}

// checkToolCalls calls every tool of the matrix through call: exactly the
// granted ones answer their probe's output, and a forbidden one answers like
// a missing tool and a missing server.
func checkToolCalls(t *testing.T, k keyCase, call func(id string, args map[string]any) (string, bool)) {
	t.Helper()
	answer := func(id string) (string, bool) {
		args, _, _ := probeFor(id)
		return call(id, args)
	}
	checkGrants(t, allTools, k.tools, answer, func(id, got string, ok bool) {
		if _, out, isErr := probeFor(id); got != out || ok == isErr {
			t.Errorf("granted %s: %q ok=%v, want %q", id, got, ok, out)
		}
	}, missingTool, missingServer)
}

// matrix is the shared state of the policy matrix test.
type matrix struct {
	g       *gateway
	rec     *recorder
	http    *http.Client
	clients map[string]*client.Client // modern-era client per authenticated key
	legacy  map[string]*client.Client // legacy-era (session) client per authenticated key
	cells   int
	skipped int
	// evMissing is set when the matrix wants server-everything as "ev" but it
	// is not installed: the cells of keys and surfaces that need it are skipped.
	evMissing bool
}

// surface is one row of the matrix: check runs for authenticated keys;
// raw is the request of the surface, sent with a rejected key.
type surface struct {
	name    string
	needsEv bool // the surface probes server-everything ("ev")
	check   func(t *testing.T, m *matrix, k keyCase)
	raw     func(m *matrix) (method, path, body string)
}

func mcpBody(method string, params string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
}

func (m *matrix) retrieve(t *testing.T, k keyCase, body string) []string {
	t.Helper()
	code, _, out := httpDo(t, m.http, "POST", m.g.base+"/tool-rag/retrieve", k.secret, body, nil)
	if code != 200 {
		t.Fatalf("retrieve: %d %s", code, out)
	}
	var resp struct {
		Results []struct {
			ToolID string `json:"tool_id"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range resp.Results {
		ids = append(ids, r.ToolID)
	}
	return ids
}

var surfaces = []surface{
	{name: "tools/list", check: func(t *testing.T, m *matrix, k keyCase) {
		want := metaTools
		if k.admin {
			want = append(append([]string{}, metaTools...), k.tools...)
		}
		if got := listNames(t, m.clients[k.name]); !sameSet(got, want) {
			t.Errorf("tools/list = %v, want %v", got, sorted(want))
		}
	}, raw: func(m *matrix) (string, string, string) { return "POST", "/mcp", mcpBody("tools/list", "{}") }},

	{name: "tools/list (session, after find_tools)", check: func(t *testing.T, m *matrix, k keyCase) {
		c := m.legacy[k.name]
		if _, err := testenv.CallTool(c, 30*time.Second, "find_tools", map[string]any{"query": "text numbers echo add reverse sleep fail", "top_k": 50}); err != nil {
			t.Fatal(err)
		}
		want := append(append([]string{}, metaTools...), k.tools...)
		if got := listNames(t, c); !sameSet(got, want) {
			t.Errorf("tools/list = %v, want %v", got, sorted(want))
		}
	}, raw: func(m *matrix) (string, string, string) {
		return "POST", "/mcp", mcpBody("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}`)
	}},

	{name: "tools/call direct", check: func(t *testing.T, m *matrix, k keyCase) {
		checkToolCalls(t, k, func(id string, args map[string]any) (string, bool) {
			res, err := testenv.CallTool(m.clients[k.name], 30*time.Second, id, args)
			if err != nil {
				return "protocol error: " + err.Error(), false
			}
			return testenv.Text(res), !res.IsError
		})
	}, raw: func(m *matrix) (string, string, string) {
		return "POST", "/mcp", mcpBody("tools/call", `{"name":"echo__echo","arguments":{"text":"x"}}`)
	}},

	{name: "run_tool", check: func(t *testing.T, m *matrix, k keyCase) {
		checkToolCalls(t, k, func(id string, args map[string]any) (string, bool) {
			res, err := testenv.CallTool(m.clients[k.name], 30*time.Second, "run_tool", map[string]any{"call_name": id, "arguments": args})
			if err != nil {
				t.Fatalf("run_tool %s: %v", id, err)
			}
			return testenv.Text(res), !res.IsError
		})
	}, raw: func(m *matrix) (string, string, string) {
		return "POST", "/mcp", mcpBody("tools/call", `{"name":"run_tool","arguments":{"call_name":"echo__echo","arguments":{"text":"x"}}}`)
	}},

	{name: "run_tools", check: func(t *testing.T, m *matrix, k keyCase) {
		ids := append(append([]string{}, allTools...), missingTool, missingServer)
		var calls []any
		for _, id := range ids {
			args, _, _ := probeFor(id)
			calls = append(calls, map[string]any{"call_name": id, "arguments": args, "id": id})
		}
		res, err := testenv.CallTool(m.clients[k.name], 30*time.Second, "run_tools", map[string]any{"calls": calls})
		if err != nil || res.IsError {
			t.Fatalf("run_tools: %v %q", err, testenv.Text(res))
		}
		b := parseBatch(t, res)
		if len(b.Results) != len(ids) {
			t.Fatalf("run_tools: %d results for %d calls", len(b.Results), len(ids))
		}
		byID := map[string]int{}
		for i, r := range b.Results {
			byID[r.ID] = i
		}
		miss := b.Results[byID[missingTool]].Error
		for _, id := range allTools {
			r := b.Results[byID[id]]
			_, out, isErr := probeFor(id)
			if has(k.tools, id) {
				got := r.Error
				if r.OK && r.Result != nil && len(r.Result.Content) > 0 {
					got = r.Result.Content[0].Text
				}
				if got != out || r.OK == isErr {
					t.Errorf("granted %s: %+v, want %q", id, r, out)
				}
				continue
			}
			if r.OK || !sameAnswer(r.Error, id, miss, missingTool) {
				t.Errorf("forbidden %s: %q; a missing tool: %q", id, r.Error, miss)
			}
		}
	}, raw: func(m *matrix) (string, string, string) {
		return "POST", "/mcp", mcpBody("tools/call", `{"name":"run_tools","arguments":{"calls":[{"call_name":"echo__echo","arguments":{"text":"x"}}]}}`)
	}},

	{name: "describe_tool", check: func(t *testing.T, m *matrix, k keyCase) {
		describe := func(id string) (string, bool) {
			res, err := testenv.CallTool(m.clients[k.name], 30*time.Second, "describe_tool", map[string]any{"call_name": id})
			if err != nil {
				t.Fatalf("describe_tool %s: %v", id, err)
			}
			return testenv.Text(res), !res.IsError
		}
		checkGrants(t, allTools, k.tools, describe, func(id, got string, ok bool) {
			if !ok || !strings.Contains(got, `"call_name":"`+id+`"`) || !strings.Contains(got, "input_schema") {
				t.Errorf("granted %s: %q", id, got)
			}
		}, missingTool)
	}, raw: func(m *matrix) (string, string, string) {
		return "POST", "/mcp", mcpBody("tools/call", `{"name":"describe_tool","arguments":{"call_name":"echo__echo"}}`)
	}},

	{name: "find_tools", check: func(t *testing.T, m *matrix, k keyCase) {
		for _, q := range []string{"text numbers echo add reverse sleep fail", "reverse the characters of a text"} {
			ids, _ := findIDs(t, m.clients[k.name], q, 50)
			if !sameSet(ids, k.tools) {
				t.Errorf("find_tools %q = %v, want exactly %v", q, sorted(ids), sorted(k.tools))
			}
		}
	}, raw: func(m *matrix) (string, string, string) {
		return "POST", "/mcp", mcpBody("tools/call", `{"name":"find_tools","arguments":{"query":"echo"}}`)
	}},

	{name: "plan", check: func(t *testing.T, m *matrix, k keyCase) {
		// The planner model (greedyPlanner) proposes a step for every tool
		// of the catalog; the gateway must keep exactly the granted ones
		// and report the rest as missing without revealing them as tools.
		res, err := testenv.CallTool(m.clients[k.name], 30*time.Second, "plan", map[string]any{"query": "text numbers echo add reverse sleep fail", "top_k": 50})
		if err != nil || res.IsError {
			t.Fatalf("plan: %v %+v", err, res)
		}
		var plan struct {
			Steps []struct {
				CallName string `json:"call_name"`
			} `json:"steps"`
		}
		if err := json.Unmarshal([]byte(testenv.Text(res)), &plan); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range plan.Steps {
			ids = append(ids, s.CallName)
		}
		if !sameSet(ids, k.tools) {
			t.Errorf("plan steps = %v, want exactly the granted tools %v", sorted(ids), sorted(k.tools))
		}
	}, raw: func(m *matrix) (string, string, string) {
		return "POST", "/mcp", mcpBody("tools/call", `{"name":"plan","arguments":{"query":"x"}}`)
	}},

	{name: "REST retrieve", check: func(t *testing.T, m *matrix, k keyCase) {
		if got := m.retrieve(t, k, `{"query":"text numbers echo add reverse sleep fail","top_k":50}`); !sameSet(got, k.tools) {
			t.Errorf("retrieve = %v, want exactly %v", sorted(got), sorted(k.tools))
		}
	}, raw: func(m *matrix) (string, string, string) {
		return "POST", "/tool-rag/retrieve", `{"query":"echo"}`
	}},

	{name: "REST retrieve allowed_servers", check: func(t *testing.T, m *matrix, k keyCase) {
		var want []string
		for _, id := range k.tools {
			if strings.HasPrefix(id, "other__") {
				want = append(want, id)
			}
		}
		for _, servers := range []string{`["other"]`, `["other","nosuch"]`} {
			if got := m.retrieve(t, k, `{"query":"text numbers echo add reverse sleep fail","top_k":50,"allowed_servers":`+servers+`}`); !sameSet(got, want) {
				t.Errorf("retrieve allowed_servers %s = %v, want exactly %v (it narrows, never widens)", servers, sorted(got), sorted(want))
			}
		}
	}, raw: func(m *matrix) (string, string, string) {
		return "POST", "/tool-rag/retrieve", `{"query":"echo","allowed_servers":["echo"]}`
	}},

	{name: "REST GET tool", check: func(t *testing.T, m *matrix, k keyCase) {
		// A forbidden tool answers 404, like a missing one.
		get := func(id string) (string, bool) {
			code, _, body := httpDo(t, m.http, "GET", m.g.base+"/tool-rag/tool/"+id, k.secret, "", nil)
			if code != 200 && code != 404 {
				t.Errorf("GET tool %s: %d %s, want 200 or 404", id, code, body)
			}
			return body, code == 200
		}
		checkGrants(t, allTools, k.tools, get, func(id, got string, ok bool) {
			if !ok || !strings.Contains(got, `"tool_id":"`+id+`"`) {
				t.Errorf("granted %s: %s", id, got)
			}
		}, missingTool)
	}, raw: func(m *matrix) (string, string, string) { return "GET", "/tool-rag/tool/echo__echo", "" }},

	{name: "resources/list", check: func(t *testing.T, m *matrix, k keyCase) {
		res, err := m.clients[k.name].ListResources(context.Background(), mcp.ListResourcesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range res.Resources {
			got = append(got, r.URI)
		}
		if !sameSet(got, k.resources) {
			t.Errorf("resources/list = %v, want %v", got, k.resources)
		}
	}, raw: func(m *matrix) (string, string, string) { return "POST", "/mcp", mcpBody("resources/list", "{}") }},

	{name: "resources/read", check: func(t *testing.T, m *matrix, k keyCase) {
		read := func(uri string) (string, bool) {
			req := mcp.ReadResourceRequest{}
			req.Params.URI = uri
			res, err := m.clients[k.name].ReadResource(context.Background(), req)
			if err != nil {
				return err.Error(), false
			}
			if len(res.Contents) == 0 {
				return "no contents", false
			}
			tc, ok := res.Contents[0].(mcp.TextResourceContents)
			if !ok || tc.URI != uri {
				return fmt.Sprintf("contents %+v", res.Contents[0]), false
			}
			return tc.Text, true
		}
		checkGrants(t, allReadable, k.readable, read, grantedOK(t), missingURI)
	}, raw: func(m *matrix) (string, string, string) {
		return "POST", "/mcp", mcpBody("resources/read", `{"uri":"gateway://echo/echo://info"}`)
	}},

	{name: "resources/templates/list", check: func(t *testing.T, m *matrix, k keyCase) {
		res, err := m.clients[k.name].ListResourceTemplates(context.Background(), mcp.ListResourceTemplatesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range res.ResourceTemplates {
			got = append(got, r.URITemplate.Raw())
		}
		if !sameSet(got, k.templates) {
			t.Errorf("resources/templates/list = %v, want %v", got, k.templates)
		}
	}, raw: func(m *matrix) (string, string, string) {
		return "POST", "/mcp", mcpBody("resources/templates/list", "{}")
	}},

	{name: "prompts/list", check: func(t *testing.T, m *matrix, k keyCase) {
		res, err := m.clients[k.name].ListPrompts(context.Background(), mcp.ListPromptsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range res.Prompts {
			got = append(got, p.Name)
		}
		if !sameSet(got, k.prompts) {
			t.Errorf("prompts/list = %v, want %v", got, k.prompts)
		}
	}, raw: func(m *matrix) (string, string, string) { return "POST", "/mcp", mcpBody("prompts/list", "{}") }},

	{name: "prompts/get", check: func(t *testing.T, m *matrix, k keyCase) {
		get := func(name string) (string, bool) {
			req := mcp.GetPromptRequest{}
			req.Params.Name = name
			req.Params.Arguments = map[string]string{"name": "Ada"}
			res, err := m.clients[k.name].GetPrompt(context.Background(), req)
			if err != nil {
				return err.Error(), false
			}
			return fmt.Sprint(len(res.Messages)), len(res.Messages) > 0
		}
		checkGrants(t, allPrompts, k.prompts, get, grantedOK(t), missingPrompt)
	}, raw: func(m *matrix) (string, string, string) {
		return "POST", "/mcp", mcpBody("prompts/get", `{"name":"echo__greeting","arguments":{"name":"Ada"}}`)
	}},
}

func matrixGateway(t *testing.T) *matrix {
	t.Helper()
	reg := "servers:\n" + stdioEntry(t, "echo", "") + stdioEntry(t, "other", "")
	keys := matrixKeys
	ev := everythingEntry(t, "ev")
	if ev != "" {
		reg += ev
		keys += matrixEvKey
	}
	g := startGateway(t, gwOpts{Registry: reg, Keys: keys, Env: map[string]string{
		"TOOL_RAG_PLANNER": "llm", "TOOL_RAG_PLANNER_URL": greedyPlanner(t), "TOOL_RAG_PLANNER_MODEL": "matrix",
	}})
	rec := newRecorder()
	return &matrix{g: g, rec: rec, http: &http.Client{Transport: rec}, clients: map[string]*client.Client{}, legacy: map[string]*client.Client{}, evMissing: ev == ""}
}

// run checks every surface with every case of cases: an authenticated case
// by the surface's check; a rejected one must fail initialize and get a 401
// whose WWW-Authenticate header satisfies challengeOK and whose body names
// nothing of the catalog.
func (m *matrix) run(t *testing.T, cases []keyCase, challengeOK func(challenge string) bool) {
	t.Helper()
	for _, k := range cases {
		if k.needsEv && m.evMissing {
			continue
		}
		if k.authOK {
			m.clients[k.name] = connect(t, m.g.url, k.secret, false, m.rec)
			m.legacy[k.name] = connect(t, m.g.url, k.secret, true, m.rec)
		} else if _, err := dial(m.g.url, k.secret, false, m.rec); err == nil {
			t.Errorf("%s: initialize succeeded", k.name)
		}
	}
	for _, s := range surfaces {
		for _, k := range cases {
			t.Run(s.name+"/"+k.name, func(t *testing.T) {
				m.cells++
				if (k.needsEv || s.needsEv) && m.evMissing {
					m.skipped++
					t.Skip("server-everything is not installed (scripts/deps.sh)")
				}
				if k.authOK {
					s.check(t, m, k)
					return
				}
				method, path, body := s.raw(m)
				code, hdr, out := httpDo(t, m.http, method, m.g.base+path, k.secret, body,
					map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
				if ch := hdr.Get("WWW-Authenticate"); code != http.StatusUnauthorized || !challengeOK(ch) {
					t.Errorf("%s %s with %s: %d %q (WWW-Authenticate %q)", method, path, k.name, code, out, ch)
				}
				if strings.Contains(out, "echo__") || strings.Contains(out, "gateway://") {
					t.Errorf("401 body reveals the catalog: %q", out)
				}
			})
		}
	}
	t.Logf("%d surfaces × %d cases = %d cells (%d skipped)", len(surfaces), len(cases), m.cells, m.skipped)
	if m.cells != len(surfaces)*len(cases) {
		t.Errorf("ran %d cells, want %d", m.cells, len(surfaces)*len(cases))
	}
}

// TestPolicyMatrix checks every surface with every kind of key: exactly the
// granted items are visible and usable, and a forbidden item is answered
// exactly like a missing one. It then checks that no secret reached a log
// line, a metric or a response.
func TestPolicyMatrix(t *testing.T) {
	m := matrixGateway(t)
	m.run(t, keyCases, func(challenge string) bool { return strings.HasPrefix(challenge, "Bearer") })

	t.Run("no secret in logs, metrics or responses", func(t *testing.T) {
		_, metricsJSON := m.g.metrics(t, "sekret-admin-a1b2")
		code, _, metricsText := httpDo(t, m.http, "GET", m.g.base+"/tool-rag/metrics", "sekret-admin-a1b2", "", map[string]string{"Accept": "text/plain"})
		if code != 200 || !strings.Contains(metricsText, "auth_failures_total") {
			t.Fatalf("prometheus metrics: %d %s", code, metricsText)
		}
		places := map[string]string{"logs": m.g.logs.String(), "metrics (json)": metricsJSON, "metrics (prometheus)": metricsText}
		bodies := m.rec.all()
		if len(bodies) < 200 {
			t.Fatalf("only %d responses recorded", len(bodies))
		}
		for i, b := range bodies {
			places["response "+strconv.Itoa(i)] = b
		}
		for _, s := range secrets {
			hexHash := strings.TrimPrefix(policy.HashSecret(s), "sha256:")
			for where, content := range places {
				if strings.Contains(content, s) {
					t.Errorf("secret %q appears in %s", s, where)
				}
				if strings.Contains(content, hexHash) {
					t.Errorf("the hash of secret %q appears in %s", s, where)
				}
			}
		}
		if len(m.g.logs.String()) == 0 {
			t.Error("no log output was captured")
		}
	})
}
