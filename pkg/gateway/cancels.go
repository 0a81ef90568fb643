package gateway

// Cancellation across instances.
//
// In one process a notifications/cancelled cancels the call it names
// (cancelInflight), and tasks/cancel the task's call (taskCancels). Where
// instances share nothing but the session store (AWS Lambda: an instance
// runs one invocation at a time, so a notification always reaches another
// one), the gateway keeps cancel records there (Config.Cancels):
//   - a notifications/cancelled for a call not running here writes a
//     record named by the principal, the session and the request id;
//   - a tools/call that has run longer than CancelWatch.After reads its
//     record every CancelWatch.Every, and cancels its context when the
//     record is there: the upstream call ends (the HTTP request to the
//     upstream is abandoned, which cancels the call at an mcp-go server;
//     a stdio upstream is sent notifications/cancelled);
//   - a gateway-run task reads its own task record at the same pace
//     (RunTask) and stops its call when the record says cancelled.
// Calls that end sooner read nothing: one strongly consistent read every
// Every, only for the calls that outlive After.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// Cancels keeps cancel records until they expire (the session store).
type Cancels interface {
	PutCancel(ctx context.Context, key string, expires time.Time) error
	Cancelled(ctx context.Context, key string) (bool, error)
}

// CancelWatch paces the checks of a running call for a cancellation from
// another instance: the first after After (default 5 s), then every Every
// (default 2 s).
type CancelWatch struct {
	After, Every time.Duration
}

// cancelRecordTTL is how long a cancel record is kept: longer than any
// call (a Lambda invocation ends within 15 minutes).
const cancelRecordTTL = time.Hour

// cancelKey names the cancel record of request id (raw JSON) of principal
// in session sid ("" for a request without one); ok is false for an
// invalid id.
func cancelKey(principal, sid string, id json.RawMessage) (string, bool) {
	var v any
	if len(id) == 0 || json.Unmarshal(id, &v) != nil || v == nil {
		return "", false
	}
	canon, _ := json.Marshal(v) // 7, 7.0 and "7" as the JSON-RPC peers compare them
	sum := sha256.Sum256([]byte(principal + "\x00" + sid + "\x00" + string(canon)))
	return hex.EncodeToString(sum[:16]), true
}

// watchCancel runs r, a tools/call, under a context that the call's cancel
// record (written by another instance) cancels; stop ends the watch.
func (g *Server) watchCancel(r *http.Request, head *requestHead) (_ *http.Request, stop func()) {
	key, ok := cancelKey(principalOf(r.Context()), r.Header.Get(server.HeaderKeySessionID), head.ID)
	if !ok {
		return r, func() {}
	}
	ctx, cancel := context.WithCancel(r.Context())
	g.watched.Store(key, cancel)
	done := make(chan struct{})
	go g.watch(ctx, done, cancel, func(ctx context.Context) bool {
		yes, err := g.cfg.Cancels.Cancelled(ctx, key)
		return err == nil && yes
	})
	return r.WithContext(ctx), func() {
		g.watched.Delete(key)
		close(done)
		cancel()
	}
}

// watch calls cancelled at CancelWatch's pace until done is closed or ctx
// ends, and cancels when it reports true.
func (g *Server) watch(ctx context.Context, done <-chan struct{}, cancel context.CancelFunc, cancelled func(context.Context) bool) {
	t := time.NewTimer(g.cfg.CancelWatch.After)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		g.Metrics.CancelChecks.Add(1)
		if cancelled(ctx) {
			g.Metrics.CancelledRemote.Add(1)
			g.log.Info("call cancelled from another instance")
			cancel()
			return
		}
		t.Reset(g.cfg.CancelWatch.Every)
	}
}

// recordCancel writes the cancel record of the call a
// notifications/cancelled names, unless it runs here (then it has been
// cancelled already).
func (g *Server) recordCancel(r *http.Request, head *requestHead) {
	key, ok := cancelKey(principalOf(r.Context()), r.Header.Get(server.HeaderKeySessionID), head.Params.RequestID)
	if !ok {
		return
	}
	if c, here := g.watched.Load(key); here {
		c.(context.CancelFunc)()
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
	defer cancel()
	if err := g.cfg.Cancels.PutCancel(ctx, key, time.Now().Add(cancelRecordTTL)); err != nil {
		g.log.Warn("cancel not recorded for the instance running the call", "error", err)
	}
}
