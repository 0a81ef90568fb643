package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// LookupKey implements auth.KeyLookup over the keys table: an unknown key
// is auth.ErrUnknownKey, a revoked one wraps auth.ErrDisabledKey. The first
// lookup of a key whose grants changed meaning (policy.ChangedMeaning) is
// logged to s.Log.
func (s *KeyStore) LookupKey(ctx context.Context, secretHash string) (policy.Key, error) {
	key, err := s.Lookup(ctx, secretHash)
	switch {
	case err == nil:
		if _, done := s.warned.LoadOrStore(key.ID, true); !done && s.Log != nil {
			for _, line := range policy.ChangedMeaning(key) {
				s.Log.Warn("key grant changed meaning: "+line, "key", key.ID)
			}
		}
		return key, nil
	case errors.Is(err, catalog.ErrNotFound):
		return policy.Key{}, auth.ErrUnknownKey
	case errors.Is(err, ErrKeyDisabled):
		return key, fmt.Errorf("API key %q: %w", key.ID, auth.ErrDisabledKey)
	}
	return policy.Key{}, err
}

// CreateWithSecret stores k under a fresh secret (policy.NewSecret) and
// returns the secret, which is not stored anywhere (only its SHA-256 hash
// is): show it once.
func (s *KeyStore) CreateWithSecret(ctx context.Context, k policy.Key) (string, error) {
	secret := policy.NewSecret()
	k.SecretHash = policy.HashSecret(secret)
	if err := s.Create(ctx, k); err != nil {
		return "", err
	}
	return secret, nil
}
