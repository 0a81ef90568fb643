// Package mcpfix holds every workaround for a defect or a missing export of
// mcp-go (github.com/mark3labs/mcp-go v1.2.1), so that each can be deleted
// in one place when mcp-go fixes it. README.md lists each defect, the test
// proving the workaround answers byte for byte what mcp-go answers, and the
// condition for deleting it.
//
// The server half (server.go, stdio.go, respond.go, sessions.go,
// streamable.go) answers tools/call without mcp-go's repeated decoding:
// Server for servers/echo, and the shared pieces (MetaDecoder, FastTool,
// NewCallToolRequest, CallRecovered, ResultResponse, Sessions, CallSession,
// WriteAnswer) for the gateway's own Streamable HTTP path in pkg/gateway,
// plus the session-lifecycle fixes in front of mcp-go's StreamableHTTPServer
// (OwnSession, InitGate, RelayEvents, KeepSessions). PatchList (lists.go)
// and PatchResult (answers.go) write list answers and results with the
// members mcp-go's types drop.
//
// The client half (client.go, frames.go) sends tools/call on a 2026-07-28
// upstream connection without mcp-go's re-encoding (StatelessCaller), and
// checks a stdio upstream's output before mcp-go's client reads it
// (FrameReader); WithRawResults keeps results as the upstream sent them.
package mcpfix
