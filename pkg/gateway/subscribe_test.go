package gateway_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/gateway"
)

// listenUpstream is a 2026-07-28 mcp-go upstream with a subscribable
// resource that records its subscriptions/listen streams; update sends
// notifications/resources/updated on the open ones that name the URI.
type listenUpstream struct {
	*server.MCPServer
	mu      sync.Mutex
	streams []listenStream
}

type listenStream struct {
	ctx     context.Context // ends with the stream
	session server.ClientSession
	uris    []string
}

func newListenUpstream() *listenUpstream {
	u := &listenUpstream{}
	hooks := &server.Hooks{}
	hooks.AddBeforeSubscriptionsListen(func(ctx context.Context, _ any, req *mcp.SubscriptionsListenRequest) {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.streams = append(u.streams, listenStream{ctx, server.ClientSessionFromContext(ctx), req.Params.Notifications.ResourceSubscriptions})
	})
	u.MCPServer = server.NewMCPServer("listen-upstream", "1.0.0", server.WithResourceCapabilities(true, false), server.WithHooks(hooks))
	u.AddResource(mcp.NewResource("up://doc", "doc"), func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: "up://doc", Text: "doc"}}, nil
	})
	return u
}

// open counts the open streams subscribed to uri.
func (u *listenUpstream) open(uri string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, st := range u.streams {
		if st.ctx.Err() == nil && slices.Contains(st.uris, uri) {
			n++
		}
	}
	return n
}

func (u *listenUpstream) waitOpen(t *testing.T, uri string, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for u.open(uri) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%d open subscriptions/listen streams for %s on the upstream, want %d", u.open(uri), uri, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// update notifies the open streams subscribed to uri; it returns how many.
func (u *listenUpstream) update(uri string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, st := range u.streams {
		if st.ctx.Err() != nil || !slices.Contains(st.uris, uri) {
			continue
		}
		select {
		case st.session.NotificationChannel() <- mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
			Method: mcp.MethodNotificationResourceUpdated,
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{"uri": uri}},
		}}:
			n++
		case <-time.After(time.Second):
		}
	}
	return n
}

// A client subscribed through the gateway to a resource of a 2026-07-28
// upstream gets its notifications/resources/updated (the gateway holds a
// subscriptions/listen stream upstream), under the gateway URI it used, and
// no more once it unsubscribes.
func TestSubscribeModernUpstream(t *testing.T) {
	up := newListenUpstream()
	srv := httptest.NewServer(newTestGatewayWith(t, up.MCPServer, 10*time.Second, gateway.HTTPOptions{}, nil, nil))
	t.Cleanup(srv.Close)
	updates := make(chan string, 16)
	c, _ := testenv.Connect(t, srv.URL+"/mcp", testenv.MCPClient{Key: "fz-agent-secret", Legacy: true,
		Transport: []transport.StreamableHTTPCOption{transport.WithContinuousListening(), transport.WithHTTPLogger(slog.New(slog.DiscardHandler))}, //lint:ignore SA1019 a legacy client receives updates on its GET stream
		OnNotification: func(n mcp.JSONRPCNotification) {
			if n.Method == mcp.MethodNotificationResourceUpdated {
				uri, _ := n.Params.AdditionalFields["uri"].(string)
				updates <- uri
			}
		}})
	ctx := context.Background()
	const exposed = "gateway://alpha/up://doc"

	sub := mcp.SubscribeRequest{}
	sub.Params.URI = exposed
	//lint:ignore SA1019 the gateway's client speaks the legacy protocol here
	if err := c.Subscribe(ctx, sub); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	up.waitOpen(t, "up://doc", 1)
	if n := up.update("up://doc"); n != 1 {
		t.Fatalf("update reached %d upstream streams, want 1", n)
	}
	select {
	case uri := <-updates:
		if uri != exposed {
			t.Errorf("notifications/resources/updated for %q, want %q", uri, exposed)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream's notifications/resources/updated did not reach the subscribed client")
	}

	unsub := mcp.UnsubscribeRequest{}
	unsub.Params.URI = exposed
	//lint:ignore SA1019 as above
	if err := c.Unsubscribe(ctx, unsub); err != nil {
		t.Fatalf("unsubscribe: %v", err)
	}
	up.waitOpen(t, "up://doc", 0)
	if n := up.update("up://doc"); n != 0 {
		t.Fatalf("after unsubscribe, the update reached %d upstream streams", n)
	}
	select {
	case uri := <-updates:
		t.Fatalf("update for %q after unsubscribe", uri)
	case <-time.After(200 * time.Millisecond):
	}
}
