package auth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"sync"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// ErrRevoked is the cause of the context of a request whose credential was
// revoked (or whose grant changed) while it was open.
var ErrRevoked = errors.New("the credential of this request was revoked or its grant changed")

// Live tracks the requests in flight per credential, so that revoking a
// credential ends what it has open: Recheck checks each open request's
// credential again and cancels the requests (GET streams, running calls)
// of those that no longer authenticate or whose grant changed. A runtime
// calls Recheck after it reloads its keys or OAuth grants, and every few
// seconds for keys and tokens that expire.
type Live struct {
	// OnRevoked, when set, is told each principal whose requests Recheck
	// ended (e.g. to delete the principal's sessions). It must not block.
	OnRevoked func(principal string)

	mu   sync.Mutex
	reqs map[*liveReq]struct{}
}

type liveReq struct {
	principal string
	grant     [32]byte
	recheck   func(context.Context) (policy.Key, error)
	cancel    context.CancelCauseFunc
}

// track registers a request until done is called.
func (l *Live) track(ctx context.Context, principal string, key policy.Key, recheck func(context.Context) (policy.Key, error)) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	r := &liveReq{principal: principal, grant: grantPrint(key), recheck: recheck, cancel: cancel}
	l.mu.Lock()
	if l.reqs == nil {
		l.reqs = map[*liveReq]struct{}{}
	}
	l.reqs[r] = struct{}{}
	l.mu.Unlock()
	return ctx, func() {
		l.mu.Lock()
		delete(l.reqs, r)
		l.mu.Unlock()
		cancel(nil)
	}
}

// Open reports how many requests are tracked.
func (l *Live) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.reqs)
}

// Recheck checks the credential of every open request again and ends the
// requests whose credential is unknown, revoked or expired now, or whose
// grant differs from the one they were admitted with. A check that fails
// for a transient reason (the key store or the authorization server is
// unavailable) leaves the request open. It returns how many requests it
// ended.
func (l *Live) Recheck(ctx context.Context) int {
	l.mu.Lock()
	reqs := make([]*liveReq, 0, len(l.reqs))
	for r := range l.reqs {
		reqs = append(reqs, r)
	}
	l.mu.Unlock()
	type verdict struct {
		key policy.Key
		err error
	}
	seen := map[string]verdict{} // one check per credential
	revoked := map[string]bool{}
	ended := 0
	for _, r := range reqs {
		id := r.principal + "\x00" + string(r.grant[:])
		v, ok := seen[id]
		if !ok {
			v.key, v.err = r.recheck(ctx)
			seen[id] = v
		}
		switch {
		case v.err != nil && !definitive(v.err):
			continue
		case v.err == nil && grantPrint(v.key) == r.grant:
			continue
		}
		r.cancel(ErrRevoked)
		ended++
		revoked[r.principal] = true
	}
	if l.OnRevoked != nil {
		for p := range revoked {
			l.OnRevoked(p)
		}
	}
	return ended
}

// definitive reports whether err says the credential is no good (as
// opposed to: it could not be checked right now).
func definitive(err error) bool {
	for _, e := range []error{ErrUnknownKey, ErrDisabledKey, ErrExpiredKey, ErrInvalidToken, ErrInsufficientScope, ErrNotAccessToken} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// grantPrint fingerprints what a key grants (its id, admin flag and
// server rules), to tell whether a grant changed.
func grantPrint(k policy.Key) [32]byte {
	b, _ := json.Marshal(struct {
		ID      string
		Admin   bool
		Servers map[string]policy.Rule
	}{k.ID, k.Admin, k.Servers})
	return sha256.Sum256(b)
}
