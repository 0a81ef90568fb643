package upstream

import (
	"context"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// The calls below are deprecated in mcp-go because protocol 2026-07-28
// dropped them (resource subscriptions became Client.Listen streams, ping
// became a transport concern). Upstreams that speak an earlier protocol
// offer nothing else, so the gateway keeps them here, for those upstreams
// only. On a modern connection Manager.Ping uses Discover, and
// Manager.Subscribe/Unsubscribe keep one subscriptions/listen stream per
// connection holding the union of its subscribed URIs (listen.go).

// legacySubscribe asks a pre-2026-07-28 upstream for
// notifications/resources/updated about uri.
func legacySubscribe(ctx context.Context, c *client.Client, uri string) error {
	req := mcp.SubscribeRequest{}
	req.Params.URI = uri
	return c.Subscribe(ctx, req) //lint:ignore SA1019 the only subscription a pre-2026-07-28 upstream serves
}

// legacyUnsubscribe ends a subscription made with legacySubscribe.
func legacyUnsubscribe(ctx context.Context, c *client.Client, uri string) error {
	req := mcp.UnsubscribeRequest{}
	req.Params.URI = uri
	return c.Unsubscribe(ctx, req) //lint:ignore SA1019 the only way to end a pre-2026-07-28 subscription
}

// legacyPing checks that a pre-2026-07-28 upstream answers.
func legacyPing(ctx context.Context, c *client.Client) error {
	return c.Ping(ctx) //lint:ignore SA1019 the liveness check of a pre-2026-07-28 upstream
}
