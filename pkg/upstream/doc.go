// Package upstream connects the gateway to its upstream MCP servers over
// stdio, SSE and Streamable HTTP, with the mcp-go client.
//
// A Manager holds one backend per configured server:
//
//   - stdio: a pool of long-lived processes (Options.StdioPoolSize, default
//     2) started on first use and reused by every call; a process that dies
//     is replaced (with exponential backoff after consecutive failures),
//     idle ones are stopped after Options.IdleTimeout, and stopping kills
//     the whole process group, so nothing is left behind. The child gets
//     only PATH and HOME from the gateway's environment (plus
//     Options.InheritEnv) and its ServerConfig.Env.
//   - sse and streamable_http: one initialised client per server, reused;
//     a forgotten session or lost connection is re-initialised
//     transparently, and the call retried when that is safe (see
//     httpBackend for the rule).
//
// Every failure of an upstream (crash, hang past the timeout, garbage on
// stdout, invalid JSON-RPC, oversized result) fails only the call concerned,
// with an *Error worded for the user, e.g.
//
//	upstream "fs": tools/call did not answer within 30s
//
// and errors.Is tells the kind: context.DeadlineExceeded, ErrUnknownServer,
// ErrResultTooLarge, ErrUnavailable, ErrInvalidResponse. A tool that runs and
// fails is not an error: its result has IsError set.
package upstream
