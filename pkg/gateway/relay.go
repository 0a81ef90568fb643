package gateway

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// withRelay routes what an upstream sends during this request's calls (log
// messages, sampling and elicitation requests) back to the client that
// made the request, and only to it: ctx is the client's request.
func (g *Server) withRelay(ctx context.Context) context.Context {
	caps, known := clientCapabilities(ctx)
	modern := server.IsModernRequest(ctx)
	// ask checks the client can be sent a feature request (declared: it
	// declared the capability) and returns the context to send it on, ended
	// when either the client's request or the upstream's request ends.
	ask := func(uctx context.Context, declared bool, feature string) (context.Context, func(), error) {
		if err := g.canAsk(known, declared, modern, feature); err != nil {
			return nil, nil, err
		}
		if err := g.canReach(ctx, feature); err != nil {
			return nil, nil, err
		}
		rctx, done := bound(ctx, uctx)
		g.Metrics.Relayed.Add(1)
		return rctx, done, nil
	}
	r := upstream.Relay{
		LogLevel: clientLogLevel(ctx),
		Log: func(n mcp.LoggingMessageNotification) {
			n.Method = string(mcp.MethodNotificationMessage)
			if err := g.srv.SendLogMessageToClient(ctx, n); err != nil {
				g.log.Debug("upstream log message not delivered", "error", err)
			}
		},
		Sample: func(uctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			rctx, done, err := ask(uctx, caps.Sampling != nil, "sampling")
			if err != nil {
				return nil, err
			}
			defer done()
			return g.requestSampling(rctx, req)
		},
		Elicit: func(uctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			rctx, done, err := ask(uctx, caps.Elicitation != nil, "elicitation")
			if err != nil {
				return nil, err
			}
			defer done()
			return g.srv.RequestElicitation(rctx, req)
		},
	}
	return upstream.WithRelay(ctx, r)
}

// canAsk says why the gateway cannot put a feature's request, made by an
// upstream during a call, to its client. A 2026-07-28 client is asked with
// an input_required result instead (roundtrip.go), which only an upstream
// on that protocol makes.
func (g *Server) canAsk(known, declared, modern bool, feature string) error {
	switch {
	case modern:
		return fmt.Errorf("the gateway's client uses MCP protocol 2026-07-28, which has no server-initiated requests: the gateway passes %s to it as an input_required result only from a server on that protocol, on a direct tool call or run_tool (not run_tools)", feature)
	case g.cfg.NoClientStreams:
		return fmt.Errorf("the gateway runs on AWS Lambda, which keeps no stream to a client between requests, so it cannot forward %s to a client on an MCP protocol before 2026-07-28; use a client on protocol 2026-07-28 (asked with an input_required result) or the gateway's local runtime", feature)
	case !known || !declared:
		return fmt.Errorf("the gateway's client does not support %s (it did not declare the %s capability)", feature, feature)
	}
	return nil
}

// canReach says why a request cannot reach the client of ctx: mcp-go
// sends server-initiated requests only on a session's standalone GET
// stream, so without one (after Config.StreamGrace) the request would wait for
// nothing until the call times out.
func (g *Server) canReach(ctx context.Context, feature string) error {
	sess := server.ClientSessionFromContext(ctx)
	if sess == nil {
		return fmt.Errorf("the gateway's client has no session to send %s requests on", feature)
	}
	grace := time.NewTimer(g.cfg.StreamGrace)
	defer grace.Stop()
	for {
		g.streamMu.Lock()
		open := g.streams[sess.SessionID()]
		if g.streamOpened == nil {
			g.streamOpened = make(chan struct{})
		}
		opened := g.streamOpened
		g.streamMu.Unlock()
		if open > 0 {
			return nil
		}
		select {
		case <-opened:
		case <-grace.C:
			return fmt.Errorf("the gateway's client declared %s but has no open stream for server requests: it must open the Streamable HTTP GET stream of its session (in mcp-go: transport.WithContinuousListening)", feature)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// openStream counts a GET stream of session sid until the returned
// function is called, and wakes the requests waiting for one.
func (g *Server) openStream(sid string) func() {
	g.streamMu.Lock()
	if g.streams == nil {
		g.streams = map[string]int{}
	}
	g.streams[sid]++
	if g.streamOpened != nil {
		close(g.streamOpened)
		g.streamOpened = nil
	}
	g.streamMu.Unlock()
	return func() {
		g.streamMu.Lock()
		if g.streams[sid]--; g.streams[sid] <= 0 {
			delete(g.streams, sid)
		}
		g.streamMu.Unlock()
	}
}

// bound returns the client request's context (which identifies its
// session), ended also when the upstream's request ends.
func bound(client, up context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(client)
	stop := context.AfterFunc(up, cancel)
	return ctx, func() { stop(); cancel() }
}

// clientCapabilities returns what the client declared: per request on the
// 2026-07-28 protocol, at initialize before it.
func clientCapabilities(ctx context.Context) (mcp.ClientCapabilities, bool) {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		if info.ClientCapabilities == nil {
			return mcp.ClientCapabilities{}, false
		}
		return *info.ClientCapabilities, true
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return s.GetClientCapabilities(), true
	}
	return mcp.ClientCapabilities{}, false
}

// clientLogLevel is the level the client asked for: per request on the
// 2026-07-28 protocol ("" = no log messages), with logging/setLevel
// before it (mcp-go's default until then).
func clientLogLevel(ctx context.Context) mcp.LoggingLevel {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.LogLevel
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithLogging); ok {
		return s.GetLogLevel()
	}
	return ""
}

// requestSampling forwards an upstream's sampling request to the gateway's
// client. mcp-go deprecates RequestSampling because protocol 2026-07-28
// dropped sampling; clients on earlier protocols still offer it and have
// no other way to be asked, so the relay keeps it for them (canAsk refuses
// modern clients before this is reached).
func (g *Server) requestSampling(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	return g.srv.RequestSampling(ctx, req) //lint:ignore SA1019 the only way to ask a pre-2026-07-28 client for sampling
}
