package auth

import (
	"context"
	"sync/atomic"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// KeySet is a KeyLookup over a list of keys that can be replaced while
// requests are served (keys.yaml reloaded on change): a request sees
// either the old list or the new one, and a key removed or revoked in the
// new list stops working at once.
type KeySet struct{ cur atomic.Pointer[StaticKeys] }

// NewKeySet returns a KeySet holding keys.
func NewKeySet(keys []policy.Key) *KeySet {
	s := &KeySet{}
	s.Replace(keys)
	return s
}

// Replace swaps in a new list.
func (s *KeySet) Replace(keys []policy.Key) { s.cur.Store(NewStaticKeys(keys)) }

// LookupKey implements KeyLookup.
func (s *KeySet) LookupKey(ctx context.Context, secretHash string) (policy.Key, error) {
	return s.cur.Load().LookupKey(ctx, secretHash)
}
