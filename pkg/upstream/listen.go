package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// listenSubs holds the resource subscriptions of one 2026-07-28 connection:
// the union of the URIs subscribed on it, served by one
// subscriptions/listen stream. A change of the set opens a stream with the
// new filter (mcp-go's Listen supersedes the previous one); an empty set
// closes it, and so does the end of the connection. Like a
// resources/subscribe on an earlier protocol, the subscriptions live and
// die with the connection: a new connection starts with none.
type listenSubs struct {
	// life ends when the connection is closed or lost; the stream is
	// opened under it. Set before the connection is used.
	life context.Context

	mu     sync.Mutex         // held while a stream is (re)opened: one change at a time
	uris   []string           // sorted, no duplicates
	cancel context.CancelFunc // closes the current stream (nil: none)
	done   chan struct{}      // closed when the current stream's goroutine ends

	acks chan mcp.SubscriptionFilter // notifications/subscriptions/acknowledged
}

func newListenSubs() *listenSubs {
	return &listenSubs{life: context.Background(), acks: make(chan mcp.SubscriptionFilter, 1)}
}

// acknowledged hands the filter a server acknowledged to the change
// waiting for it (nobody waits for an acknowledgement that comes late).
func (l *listenSubs) acknowledged(n mcp.JSONRPCNotification) {
	var f mcp.SubscriptionFilter
	if raw, err := json.Marshal(n.Params.AdditionalFields["notifications"]); err == nil {
		_ = json.Unmarshal(raw, &f)
	}
	select {
	case l.acks <- f:
	default:
	}
}

// subscribe adds uri to the set and reopens the stream with it; it returns
// once the server has acknowledged the new filter.
func (l *listenSubs) subscribe(ctx context.Context, h *connRelay, c *client.Client, uri string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, found := slices.BinarySearch(l.uris, uri)
	if found && l.alive() {
		return nil
	}
	want := l.uris
	if !found {
		want = slices.Insert(slices.Clone(l.uris), i, uri)
	}
	ack, err := l.listen(ctx, h, c, want)
	if err != nil {
		return err
	}
	if !slices.Contains(ack.ResourceSubscriptions, uri) {
		return newProblem(nil, nil, "the server did not establish the subscription to %s", uri)
	}
	l.uris = want
	return nil
}

// unsubscribe removes uri from the set: the stream is reopened without it,
// or closed when nothing is left.
func (l *listenSubs) unsubscribe(ctx context.Context, h *connRelay, c *client.Client, uri string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, found := slices.BinarySearch(l.uris, uri)
	if !found {
		return nil
	}
	want := slices.Delete(slices.Clone(l.uris), i, i+1)
	l.uris = want
	if len(want) == 0 {
		l.close()
		return nil
	}
	_, err := l.listen(ctx, h, c, want)
	return err
}

// alive reports whether the current stream is open. l.mu is held.
func (l *listenSubs) alive() bool {
	if l.done == nil {
		return false
	}
	select {
	case <-l.done:
		return false
	default:
		return true
	}
}

// close ends the current stream, if any, and waits for it. l.mu is held.
func (l *listenSubs) close() {
	if l.cancel != nil {
		l.cancel()
		<-l.done
		l.cancel, l.done = nil, nil
	}
}

// listen opens a stream for uris in place of the current one and waits
// for the server's acknowledgement (ctx bounds the wait, not the stream).
// l.mu is held.
func (l *listenSubs) listen(ctx context.Context, h *connRelay, c *client.Client, uris []string) (mcp.SubscriptionFilter, error) {
	if err := l.life.Err(); err != nil {
		return mcp.SubscriptionFilter{}, newProblem(ErrUnavailable, err, "the connection to the server was closed")
	}
	select { // an acknowledgement of an earlier stream is not this one's
	case <-l.acks:
	default:
	}
	filter := mcp.SubscriptionFilter{ResourceSubscriptions: slices.Clone(uris)}
	sctx, cancel := context.WithCancel(l.life)
	done := make(chan struct{})
	failed := make(chan error, 1)
	go func() {
		defer close(done)
		err := c.Listen(sctx, filter) // supersedes the stream it replaces
		if sctx.Err() != nil || errors.Is(err, context.Canceled) {
			return // closed, or superseded by the stream that replaced it
		}
		if err == nil {
			err = errors.New("the server closed the stream")
		}
		failed <- err
		h.log.Info("resource subscription stream to upstream ended", "err", err)
	}()
	l.close()
	l.cancel, l.done = cancel, done
	select {
	case ack := <-l.acks:
		return ack, nil
	case err := <-failed:
		l.close()
		return mcp.SubscriptionFilter{}, fmt.Errorf("subscriptions/listen: %w", err)
	case <-ctx.Done():
		// The stream may still be acknowledged; it stays open for the
		// URIs the set holds. The caller's change failed.
		return mcp.SubscriptionFilter{}, context.Cause(ctx)
	}
}

// listenSubscribe adds uri to the subscriptions/listen stream of the
// 2026-07-28 connection the call of ctx runs on.
func listenSubscribe(ctx context.Context, c *client.Client, uri string) error {
	h := connOf(ctx)
	if h == nil {
		return errors.New("subscribe: the call has no upstream connection") // a bug, not the caller's
	}
	return h.subs.subscribe(ctx, h, c, uri)
}

// listenUnsubscribe removes uri from that stream (see listenSubscribe).
func listenUnsubscribe(ctx context.Context, c *client.Client, uri string) error {
	h := connOf(ctx)
	if h == nil {
		return errors.New("unsubscribe: the call has no upstream connection")
	}
	return h.subs.unsubscribe(ctx, h, c, uri)
}

// connOf is the connection a call runs on (set by connRelay.begin).
func connOf(ctx context.Context) *connRelay {
	if in, ok := ctx.Value(inflightKey{}).(*inflight); ok {
		return in.hub
	}
	return nil
}
