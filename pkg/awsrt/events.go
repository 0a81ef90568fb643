package awsrt

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// sessionStateIdle is how long mcp-go keeps the per-session transport state
// of an idle legacy session in one instance (the session itself lives in
// the sessions table and outlives it).
const sessionStateIdle = 10 * time.Minute

// relayEvents is an mcp-go EventStore that records nothing. It is there for
// its effect on the POST path: without an event store, mcp-go's
// notification forwarder can take a notification off the session channel
// just as the handler returns, find the request finished and drop it, so a
// find_tools response would sometimes lack notifications/tools/list_changed.
// With an event store, the request waits for the forwarder and every
// notification is written to the response before the result. Events get
// no ids, so nothing is offered for resumption (a Lambda invocation cannot
// hold a stream to resume anyway).
type relayEvents struct{}

var _ server.EventStore = relayEvents{}

func (relayEvents) StoreEvent(context.Context, string, string, json.RawMessage) (string, error) {
	return "", nil
}

func (relayEvents) ReplayEventsAfter(context.Context, string, string, func(string, json.RawMessage) error) (string, error) {
	return "", server.ErrUnknownEventID
}

func (relayEvents) PurgeSession(context.Context, string) error { return nil }
