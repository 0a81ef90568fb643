package upstream

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// listenServer is an in-process mcp-go Streamable HTTP server (protocol
// 2026-07-28) with subscribable resources. It records the
// subscriptions/listen streams opened on it, and update sends
// notifications/resources/updated on every open stream whose filter names
// the URI, as a 2026-07-28 server must.
type listenServer struct {
	*httptest.Server
	mu      sync.Mutex
	streams []*listenStream
}

type listenStream struct {
	ctx     context.Context // ends with the stream
	session mcpserver.ClientSession
	uris    []string
}

func newListenServer(t *testing.T) *listenServer {
	t.Helper()
	ls := &listenServer{}
	hooks := &mcpserver.Hooks{}
	hooks.AddBeforeSubscriptionsListen(func(ctx context.Context, _ any, req *mcp.SubscriptionsListenRequest) {
		ls.mu.Lock()
		defer ls.mu.Unlock()
		ls.streams = append(ls.streams, &listenStream{
			ctx:     ctx,
			session: mcpserver.ClientSessionFromContext(ctx),
			uris:    slices.Sorted(slices.Values(req.Params.Notifications.ResourceSubscriptions)),
		})
	})
	s := mcpserver.NewMCPServer("listen-upstream", "1.0.0", mcpserver.WithResourceCapabilities(true, false), mcpserver.WithHooks(hooks))
	for _, uri := range []string{"doc://a", "doc://b"} {
		s.AddResource(mcp.NewResource(uri, uri), func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, Text: uri}}, nil
		})
	}
	ls.Server = httptest.NewServer(mcpserver.NewStreamableHTTPServer(s))
	t.Cleanup(ls.Close)
	return ls
}

// open returns the filters (resource URIs) of the streams still open.
func (ls *listenServer) open() [][]string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var out [][]string
	for _, st := range ls.streams {
		if st.ctx.Err() == nil {
			out = append(out, st.uris)
		}
	}
	return out
}

// update notifies the open streams subscribed to uri and returns how many
// it notified.
func (ls *listenServer) update(t *testing.T, uri string) int {
	t.Helper()
	ls.mu.Lock()
	defer ls.mu.Unlock()
	n := 0
	for _, st := range ls.streams {
		if st.ctx.Err() != nil || !slices.Contains(st.uris, uri) {
			continue
		}
		note := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
			Method: mcp.MethodNotificationResourceUpdated,
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{"uri": uri}},
		}}
		select {
		case st.session.NotificationChannel() <- note:
			n++
		case <-time.After(time.Second):
			t.Errorf("the stream's notification channel is blocked")
		}
	}
	return n
}

// waitOpen waits until the open streams are exactly want.
func (ls *listenServer) waitOpen(t *testing.T, want [][]string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := ls.open()
		if slices.EqualFunc(got, want, slices.Equal[[]string]) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("open subscriptions/listen streams on the upstream: %q, want %q", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// On a 2026-07-28 upstream, Subscribe and Unsubscribe keep one
// subscriptions/listen stream per connection holding the union of the
// subscribed URIs; the upstream's notifications/resources/updated reach
// OnResourceUpdated, and stop once the URI is unsubscribed.
func TestSubscribeListenModern(t *testing.T) {
	ls := newListenServer(t)
	m, logs := newTestManager(t, Options{})
	m.SetServers(map[string]ServerConfig{"docs": {Transport: TransportStreamableHTTP, URL: ls.URL + "/mcp"}})
	type update struct{ server, uri string }
	got := make(chan update, 16)
	m.OnResourceUpdated(func(server, uri string) { got <- update{server, uri} })
	expect := func(uri string) {
		t.Helper()
		select {
		case u := <-got:
			if u != (update{"docs", uri}) {
				t.Fatalf("update %+v, want docs %s", u, uri)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no notifications/resources/updated for %s reached OnResourceUpdated", uri)
		}
	}
	quiet := func() {
		t.Helper()
		select {
		case u := <-got:
			t.Fatalf("unexpected update %+v", u)
		case <-time.After(200 * time.Millisecond):
		}
	}
	ctx := context.Background()

	if err := m.Subscribe(ctx, "docs", "doc://a"); err != nil {
		t.Fatalf("subscribe doc://a: %v", err)
	}
	if info, _ := m.Info(ctx, "docs"); !mcp.IsModernProtocol(info.ProtocolVersion) {
		t.Fatalf("upstream negotiated %q, want 2026-07-28 or later", info.ProtocolVersion)
	}
	ls.waitOpen(t, [][]string{{"doc://a"}})
	if n := ls.update(t, "doc://a"); n != 1 {
		t.Fatalf("update doc://a reached %d streams, want 1", n)
	}
	expect("doc://a")

	// A second URI re-listens with the union; the old stream is closed.
	if err := m.Subscribe(ctx, "docs", "doc://b"); err != nil {
		t.Fatalf("subscribe doc://b: %v", err)
	}
	ls.waitOpen(t, [][]string{{"doc://a", "doc://b"}})
	// Subscribing again changes nothing.
	if err := m.Subscribe(ctx, "docs", "doc://a"); err != nil {
		t.Fatalf("subscribe doc://a again: %v", err)
	}
	ls.waitOpen(t, [][]string{{"doc://a", "doc://b"}})
	ls.update(t, "doc://b")
	expect("doc://b")

	if err := m.Unsubscribe(ctx, "docs", "doc://a"); err != nil {
		t.Fatalf("unsubscribe doc://a: %v", err)
	}
	ls.waitOpen(t, [][]string{{"doc://b"}})
	if n := ls.update(t, "doc://a"); n != 0 {
		t.Fatalf("after unsubscribe, update doc://a reached %d streams", n)
	}
	quiet()
	ls.update(t, "doc://b")
	expect("doc://b")

	// The last unsubscribe closes the stream.
	if err := m.Unsubscribe(ctx, "docs", "doc://b"); err != nil {
		t.Fatalf("unsubscribe doc://b: %v", err)
	}
	ls.waitOpen(t, nil)
	if n := ls.update(t, "doc://b"); n != 0 {
		t.Fatalf("after unsubscribe, update doc://b reached %d streams", n)
	}
	quiet()
	// Unsubscribing what is not subscribed is not an error.
	if err := m.Unsubscribe(ctx, "docs", "doc://b"); err != nil {
		t.Fatalf("unsubscribe doc://b again: %v", err)
	}

	// Closing the connection ends its stream.
	if err := m.Subscribe(ctx, "docs", "doc://a"); err != nil {
		t.Fatalf("subscribe doc://a: %v", err)
	}
	ls.waitOpen(t, [][]string{{"doc://a"}})
	m.SetServers(nil)
	ls.waitOpen(t, nil)
	// Streams replaced or closed by the gateway did not end by accident.
	if strings.Contains(logs.String(), "stream to upstream ended") {
		t.Errorf("a stream was reported as ended by the upstream:\n%s", logs)
	}
}

// A pre-2026-07-28 upstream (server-everything, 2025-11-25, over stdio)
// still gets resources/subscribe and resources/unsubscribe: its updates
// reach OnResourceUpdated while subscribed and not after.
func TestSubscribeLegacyUpstream(t *testing.T) {
	bin := testenv.NPMBin(t, "mcp-server-everything")
	m, _ := newTestManager(t, Options{StdioPoolSize: 1})
	m.SetServers(map[string]ServerConfig{"ev": {Transport: TransportStdio, Command: bin, Args: []string{"stdio"}}})
	got := make(chan string, 64)
	m.OnResourceUpdated(func(server, uri string) { got <- server + " " + uri })
	ctx := ctxT(t, 60*time.Second)
	info, err := m.Info(ctx, "ev")
	if err != nil {
		t.Fatal(err)
	}
	if mcp.IsModernProtocol(info.ProtocolVersion) {
		t.Fatalf("server-everything negotiated %q; this test needs a pre-2026-07-28 upstream", info.ProtocolVersion)
	}
	resources, err := m.ListResources(ctx, "ev")
	if err != nil || len(resources) == 0 {
		t.Fatalf("ListResources = %d, %v", len(resources), err)
	}
	uri := resources[0].URI
	// toggle-subscriber-updates starts (or stops) its simulated updates,
	// sending one at once for every subscribed URI.
	toggle := func() {
		t.Helper()
		if _, err := m.CallTool(ctx, "ev", "toggle-subscriber-updates", map[string]any{}); err != nil {
			t.Fatalf("toggle-subscriber-updates: %v", err)
		}
	}
	if err := m.Subscribe(ctx, "ev", uri); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	toggle() // on
	select {
	case u := <-got:
		if u != "ev "+uri {
			t.Fatalf("update %q, want ev %s", u, uri)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/resources/updated reached OnResourceUpdated")
	}
	if err := m.Unsubscribe(ctx, "ev", uri); err != nil {
		t.Fatalf("unsubscribe: %v", err)
	}
	toggle() // off
	for len(got) > 0 {
		<-got // sent before the unsubscribe
	}
	toggle() // on again: nothing is subscribed, so nothing is sent
	select {
	case u := <-got:
		t.Fatalf("update %q after unsubscribe", u)
	case <-time.After(500 * time.Millisecond):
	}
	toggle() // off
}

// The same over stdio (testdata/listenserver, 2026-07-28): the stream
// lives on the process, follows Subscribe and Unsubscribe, and ends with
// the process.
func TestSubscribeListenModernStdio(t *testing.T) {
	bin, err := testenv.BuildGoBinary(".", "github.com/toolrag/mcp-gateway/pkg/upstream/testdata/listenserver")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := newTestManager(t, Options{StdioPoolSize: 1})
	m.SetServers(map[string]ServerConfig{"docs": {Transport: TransportStdio, Command: bin}})
	got := make(chan string, 16)
	m.OnResourceUpdated(func(server, uri string) { got <- server + " " + uri })
	ctx := ctxT(t, 60*time.Second)
	tool := func(name string, args map[string]any) string {
		t.Helper()
		res, err := m.CallTool(ctx, "docs", name, args)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return resultText(t, res)
	}
	listening := func(want string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			l := tool("listening", nil)
			if l == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("open streams on the upstream: %q, want %q", l, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	if err := m.Subscribe(ctx, "docs", "doc://a"); err != nil {
		t.Fatalf("subscribe doc://a: %v", err)
	}
	if info, _ := m.Info(ctx, "docs"); !mcp.IsModernProtocol(info.ProtocolVersion) {
		t.Fatalf("upstream negotiated %q, want 2026-07-28 or later", info.ProtocolVersion)
	}
	if err := m.Subscribe(ctx, "docs", "doc://b"); err != nil {
		t.Fatalf("subscribe doc://b: %v", err)
	}
	listening("doc://a doc://b")
	if n := tool("touch", map[string]any{"uri": "doc://a"}); n != "1" {
		t.Fatalf("touch doc://a notified %s streams, want 1", n)
	}
	select {
	case u := <-got:
		if u != "docs doc://a" {
			t.Fatalf("update %q, want docs doc://a", u)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/resources/updated reached OnResourceUpdated")
	}
	if err := m.Unsubscribe(ctx, "docs", "doc://a"); err != nil {
		t.Fatalf("unsubscribe doc://a: %v", err)
	}
	listening("doc://b")
	if n := tool("touch", map[string]any{"uri": "doc://a"}); n != "0" {
		t.Fatalf("after unsubscribe, touch doc://a notified %s streams", n)
	}
	if err := m.Unsubscribe(ctx, "docs", "doc://b"); err != nil {
		t.Fatalf("unsubscribe doc://b: %v", err)
	}
	listening("")
	select {
	case u := <-got:
		t.Fatalf("unexpected update %q", u)
	case <-time.After(200 * time.Millisecond):
	}
	// A subscription open when the process is stopped does not hold it up.
	if err := m.Subscribe(ctx, "docs", "doc://a"); err != nil {
		t.Fatalf("subscribe doc://a: %v", err)
	}
	listening("doc://a")
}
