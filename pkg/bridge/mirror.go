package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/internal/mcpfix"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// mirror is what the bridge has registered of the child's lists.
type mirror struct {
	tools, prompts, resources, templates listState
	refreshed                            time.Time
	refreshErr                           error
}

// listState is one registered list: its JSON (to tell a change), size,
// and its items as the child sent them, by key (name, or URI for
// resources), which the bridge serves in place of mcp-go's (asSent).
type listState struct {
	sig string
	n   int
	raw map[string]json.RawMessage
}

// pidWatchInterval is how often the refresher looks for new processes.
const pidWatchInterval = time.Second

// newMirrorServer is the mcp-go server that shows the child's surface: its
// serverInfo and instructions, and the capabilities it declared (list
// changes are announced, since the bridge re-reads the lists).
func newMirrorServer(id string, info upstream.ServerInfo) *server.MCPServer {
	name, version := info.Name, info.Version
	if name == "" {
		name = id
	}
	if version == "" {
		version = "unknown"
	}
	opts := []server.ServerOption{server.WithRecovery()}
	if info.Instructions != "" {
		opts = append(opts, server.WithInstructions(info.Instructions))
	}
	if info.Title != "" {
		opts = append(opts, server.WithTitle(info.Title))
	}
	caps := info.Capabilities
	if caps.Tools != nil {
		opts = append(opts, server.WithToolCapabilities(true))
	}
	if caps.Prompts != nil {
		opts = append(opts, server.WithPromptCapabilities(true))
	}
	if caps.Resources != nil {
		opts = append(opts, server.WithResourceCapabilities(false, true))
	}
	return server.NewMCPServer(name, version, opts...)
}

// Refresh re-reads the child's tools, prompts, resources and resource
// templates now and registers what changed (clients get a list_changed
// notification). A list that cannot be read keeps its last version, and
// the error is returned and shown by /health.
func (b *Bridge) Refresh(ctx context.Context) error {
	b.refreshMu.Lock()
	defer b.refreshMu.Unlock()
	err := b.refresh(ctx)
	pids := b.PIDs() // the processes the lists were just read from
	b.mu.Lock()
	b.mirror.refreshed = time.Now()
	b.mirror.refreshErr = err
	if err == nil {
		b.seenPIDs = map[int]bool{}
		for _, p := range pids {
			b.seenPIDs[p] = true
		}
	}
	b.mu.Unlock()
	return err
}

func (b *Bridge) refresh(ctx context.Context) error {
	caps := b.info.Capabilities
	if caps.Tools != nil {
		if err := readList(ctx, b, b.m.ListTools, "tools", "name", b.setTools); err != nil {
			return err
		}
	}
	if caps.Prompts != nil {
		if err := readList(ctx, b, b.m.ListPrompts, "prompts", "name", b.setPrompts); err != nil {
			return err
		}
	}
	if caps.Resources != nil {
		if err := readList(ctx, b, b.m.ListResources, "resources", "uri", b.setResources); err != nil {
			return err
		}
		if err := readList(ctx, b, b.m.ListResourceTemplates, "resourceTemplates", "uriTemplate", b.setTemplates); err != nil {
			return err
		}
	}
	return nil
}

// readList reads one of the child's lists with list and hands it to set
// with its items as sent (member of each page, each item by its key).
func readList[T any](ctx context.Context, b *Bridge, list func(context.Context, string) ([]T, error), member, key string, set func([]T, map[string]json.RawMessage)) error {
	rctx, raws := mcpfix.WithRawResults(ctx)
	items, err := list(rctx, b.id)
	if err != nil {
		return err
	}
	set(items, raws.Items(member, key))
	return nil
}

// changed reports whether list, with its items as sent (raw), differs
// from what st holds, and updates st.
func (b *Bridge) changed(st *listState, list any, raw map[string]json.RawMessage, n int) bool {
	sig, err := json.Marshal([]any{list, raw})
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil && string(sig) == st.sig && n == st.n {
		return false
	}
	st.sig, st.n, st.raw = string(sig), n, raw
	return true
}

func (b *Bridge) setTools(tools []mcp.Tool, raw map[string]json.RawMessage) {
	mirrorList(b, &b.mirror.tools, tools, raw, func(t mcp.Tool) string { return t.Name },
		func(t mcp.Tool) (server.ServerTool, bool) {
			// mcp-go refuses (panics on) tools with invalid x-mcp-header
			// annotations; leave such a tool out rather than stop.
			if err := mcp.ValidateParamHeaderAnnotations(&t); err != nil {
				b.log.Warn("leaving out a tool the bridge cannot serve", "tool", t.Name, "err", err)
				return server.ServerTool{}, false
			}
			return server.ServerTool{Tool: t, Handler: b.callTool}, true
		}, b.srv.SetTools, "tools", "tools")
}

func (b *Bridge) setPrompts(prompts []mcp.Prompt, raw map[string]json.RawMessage) {
	mirrorList(b, &b.mirror.prompts, prompts, raw, func(p mcp.Prompt) string { return p.Name },
		func(p mcp.Prompt) (server.ServerPrompt, bool) {
			return server.ServerPrompt{Prompt: p, Handler: b.getPrompt}, true
		}, b.srv.SetPrompts, "prompts", "prompts")
}

func (b *Bridge) setResources(resources []mcp.Resource, raw map[string]json.RawMessage) {
	mirrorList(b, &b.mirror.resources, resources, raw, func(r mcp.Resource) string { return r.URI },
		func(r mcp.Resource) (server.ServerResource, bool) {
			return server.ServerResource{Resource: r, Handler: b.readResource}, true
		}, b.srv.SetResources, "resources", "resources")
}

func (b *Bridge) setTemplates(templates []mcp.ResourceTemplate, raw map[string]json.RawMessage) {
	mirrorList(b, &b.mirror.templates, templates, raw, templateURI,
		func(t mcp.ResourceTemplate) (server.ServerResourceTemplate, bool) {
			if templateURI(t) == "" {
				b.log.Warn("leaving out a resource template without a URI template", "name", t.Name)
				return server.ServerResourceTemplate{}, false
			}
			return server.ServerResourceTemplate{Template: t, Handler: b.readResource}, true
		}, b.srv.SetResourceTemplates, "resource templates", "templates")
}

func templateURI(t mcp.ResourceTemplate) string {
	if t.URITemplate == nil || t.URITemplate.Template == nil {
		return ""
	}
	return t.URITemplate.Raw()
}

// mirrorList registers one of the child's lists on the bridge's server:
// items sorted by key and, when they differ from what st holds, the entry
// of each (those entry leaves out are not registered) through register.
// what names the list in the log, count the log's attribute.
func mirrorList[T, E any](b *Bridge, st *listState, items []T, raw map[string]json.RawMessage,
	key func(T) string, entry func(T) (E, bool), register func(...E), what, count string) {
	sort.SliceStable(items, func(i, j int) bool { return key(items[i]) < key(items[j]) })
	if !b.changed(st, items, raw, len(items)) {
		return
	}
	entries := make([]E, 0, len(items))
	for _, it := range items {
		if e, ok := entry(it); ok {
			entries = append(entries, e)
		}
	}
	register(entries...)
	b.log.Info("registered the server's "+what, count, len(entries))
}

// The handlers proxy to the pool under the original names and URIs. A
// failure to get an answer is a JSON-RPC error with the Manager's wording,
// e.g. `upstream "memory": tools/call failed: the server process exited
// (signal: killed) during the call`; a tool that ran and failed is a
// result with isError, as the child sent it.

// Each handler continues the caller's trace (the traceparent of the
// request's _meta or HTTP headers) into the child: the pool's request
// carries it in _meta, with the caller's other _meta members.

func (b *Bridge) callTool(ctx context.Context, req mcp.CallToolRequest) (_ *mcp.CallToolResult, err error) {
	ctx, span := tracing.StartServe(ctx, string(mcp.MethodToolsCall), req.Params.Name, req.Params.Meta)
	defer func() { tracing.End(span, err) }()
	res, err := keepAnswer(ctx, "content", func(ctx context.Context) (*mcp.CallToolResult, error) {
		return b.m.CallTool(ctx, b.id, req.Params.Name, req.GetArguments())
	})
	if err != nil {
		return nil, b.failed(err)
	}
	return res, nil
}

func (b *Bridge) getPrompt(ctx context.Context, req mcp.GetPromptRequest) (_ *mcp.GetPromptResult, err error) {
	ctx, span := tracing.StartServe(ctx, string(mcp.MethodPromptsGet), req.Params.Name, req.Params.Meta)
	defer func() { tracing.End(span, err) }()
	res, err := keepAnswer(ctx, "messages", func(ctx context.Context) (*mcp.GetPromptResult, error) {
		return b.m.GetPrompt(ctx, b.id, req.Params.Name, req.Params.Arguments)
	})
	if err != nil {
		return nil, b.failed(err)
	}
	return res, nil
}

func (b *Bridge) readResource(ctx context.Context, req mcp.ReadResourceRequest) (_ []mcp.ResourceContents, err error) {
	ctx, span := tracing.StartServe(ctx, string(mcp.MethodResourcesRead), "", req.Params.Meta)
	defer func() { tracing.End(span, err) }()
	res, err := keepAnswer(ctx, "contents", func(ctx context.Context) (*mcp.ReadResourceResult, error) {
		return b.m.ReadResource(ctx, b.id, req.Params.URI)
	})
	if err != nil {
		return nil, b.failed(err)
	}
	return res.Contents, nil
}

// failed passes err on; when the process was lost, the lists are re-read
// (on the replacement) in the background.
func (b *Bridge) failed(err error) error {
	if errors.Is(err, upstream.ErrUnavailable) {
		select {
		case b.kick <- struct{}{}:
		default:
		}
	}
	return err
}

// loop refreshes the lists every RefreshInterval, after a call found the
// process gone, and when a process the mirror has not been read from
// appears (a restart the calls did not notice).
func (b *Bridge) loop() {
	defer close(b.loopDone)
	var every <-chan time.Time
	if b.cfg.RefreshInterval > 0 {
		t := time.NewTicker(b.cfg.RefreshInterval)
		defer t.Stop()
		every = t.C
	}
	watch := time.NewTicker(pidWatchInterval)
	defer watch.Stop()
	for {
		why := ""
		select {
		case <-b.ctx.Done():
			return
		case <-every:
			why = "interval"
		case <-b.kick:
			why = "process lost"
		case <-watch.C:
			if !b.newProcess() {
				continue
			}
			why = "new process"
		}
		ctx, cancel := context.WithTimeout(b.ctx, b.cfg.ConnectTimeout+b.cfg.CallTimeout)
		err := b.Refresh(ctx)
		cancel()
		if err != nil && b.ctx.Err() == nil {
			b.log.Warn("could not re-read the server's lists; keeping the last ones", "reason", why, "err", err)
		} else if err == nil {
			b.log.Debug("re-read the server's lists", "reason", why)
		}
	}
}

// newProcess reports whether a live process started after the last
// successful refresh.
func (b *Bridge) newProcess() bool {
	pids := b.PIDs()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range pids {
		if !b.seenPIDs[p] {
			return true
		}
	}
	return false
}

// counts returns the sizes of the registered lists and the last refresh.
func (b *Bridge) counts() (m mirror) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mirror
}

// listKeys name, for each list answer's items, the member that keys them.
var listKeys = map[string]string{"tools": "name", "prompts": "name", "resources": "uri", "resourceTemplates": "uriTemplate"}

// asSent answers with the lists and results as the child sent them: mcp-go
// writes them from its own types, which drop the members (and the keys
// inside annotations, execution, icons, content items...) they do not
// know (mcpfix.PatchList, mcpfix.PatchResult). Other requests go to next
// untouched.
func (b *Bridge) asSent(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body) // as mcp-go does next
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err != nil || json.Unmarshal(body, &req) != nil { // a batch: as mcp-go writes it
			next.ServeHTTP(w, r)
			return
		}
		switch req.Method {
		case string(mcp.MethodToolsCall), string(mcp.MethodPromptsGet), string(mcp.MethodResourcesRead):
			ctx, a := withAnswer(r.Context())
			w, r = mcpfix.PatchResult(w, req.ID, a.get), r.WithContext(ctx)
		default:
			member := mcpfix.ListMember(req.Method)
			if raw := b.rawList(member); len(raw) > 0 {
				var done func()
				w, done = mcpfix.PatchList(w, member, asSentItem(raw, listKeys[member]))
				defer done()
			}
		}
		next.ServeHTTP(w, r)
	})
}

// asSentItem replaces a listed item by the one of raw with its key.
func asSentItem(raw map[string]json.RawMessage, key string) func(map[string]json.RawMessage) bool {
	return func(item map[string]json.RawMessage) bool {
		var k string
		var sent map[string]json.RawMessage
		if json.Unmarshal(item[key], &k) != nil || json.Unmarshal(raw[k], &sent) != nil || sent == nil {
			return false
		}
		clear(item)
		maps.Copy(item, sent)
		return true
	}
}

// answer is where a handler leaves the result the child sent for the
// request (asSent writes it).
type answer struct {
	mu   sync.Mutex
	sent json.RawMessage
}

type answerKey struct{}

func withAnswer(ctx context.Context) (context.Context, *answer) {
	a := &answer{}
	return context.WithValue(ctx, answerKey{}, a), a
}

func (a *answer) get() json.RawMessage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sent
}

// keepAnswer runs call with a context that keeps the result the child
// sends, and leaves it for asSent. A result mcp-go could not decode (a
// content type it does not know) is still an answer: when the last result
// the child sent has the method's member (content, messages, contents),
// call's error is dropped and the empty result stands in for the one
// asSent writes.
func keepAnswer[R any](ctx context.Context, member string, call func(context.Context) (*R, error)) (*R, error) {
	a, _ := ctx.Value(answerKey{}).(*answer)
	if a == nil {
		return call(ctx)
	}
	rctx, raws := mcpfix.WithRawResults(ctx)
	res, err := call(rctx)
	sent := raws.Last()
	if err != nil {
		var m map[string]json.RawMessage
		if json.Unmarshal(sent, &m) != nil || m[member] == nil {
			return res, err
		}
		res = new(R)
	}
	a.mu.Lock()
	a.sent = sent
	a.mu.Unlock()
	return res, nil
}

// rawList returns the items of the list member ("tools", ...) as the child
// sent them, by key.
func (b *Bridge) rawList(member string) map[string]json.RawMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch member {
	case "tools":
		return b.mirror.tools.raw
	case "prompts":
		return b.mirror.prompts.raw
	case "resources":
		return b.mirror.resources.raw
	case "resourceTemplates":
		return b.mirror.templates.raw
	}
	return nil
}
