// Command listenserver is a test upstream of pkg/upstream: an mcp-go stdio
// server (protocol 2026-07-28) with subscribable resources doc://a and
// doc://b. It records its subscriptions/listen streams; the tool
// "listening" lists the URIs of the open ones (one line per stream) and
// "touch {uri}" sends notifications/resources/updated on the open streams
// that name uri, answering how many it notified.
package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type stream struct {
	ctx     context.Context
	session server.ClientSession
	uris    []string
}

func main() {
	var mu sync.Mutex
	var streams []*stream
	hooks := &server.Hooks{}
	hooks.AddBeforeSubscriptionsListen(func(ctx context.Context, _ any, req *mcp.SubscriptionsListenRequest) {
		mu.Lock()
		defer mu.Unlock()
		streams = append(streams, &stream{ctx, server.ClientSessionFromContext(ctx), slices.Sorted(slices.Values(req.Params.Notifications.ResourceSubscriptions))})
	})
	s := server.NewMCPServer("listenserver", "1.0.0", server.WithResourceCapabilities(true, false), server.WithToolCapabilities(false), server.WithHooks(hooks))
	for _, uri := range []string{"doc://a", "doc://b"} {
		s.AddResource(mcp.NewResource(uri, uri), func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, Text: uri}}, nil
		})
	}
	s.AddTool(mcp.NewTool("listening"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		var lines []string
		for _, st := range streams {
			if st.ctx.Err() == nil {
				lines = append(lines, strings.Join(st.uris, " "))
			}
		}
		return mcp.NewToolResultText(strings.Join(lines, "\n")), nil
	})
	s.AddTool(mcp.NewTool("touch", mcp.WithString("uri", mcp.Required())), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		uri := req.GetString("uri", "")
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, st := range streams {
			if st.ctx.Err() != nil || !slices.Contains(st.uris, uri) {
				continue
			}
			st.session.NotificationChannel() <- mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
				Method: mcp.MethodNotificationResourceUpdated,
				Params: mcp.NotificationParams{AdditionalFields: map[string]any{"uri": uri}},
			}}
			n++
		}
		return mcp.NewToolResultText(fmt.Sprint(n)), nil
	})
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
