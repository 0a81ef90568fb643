package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/toolrag/mcp-gateway/pkg/auth"
)

// keySet is the authorization server's JWKS, fetched once and kept (across
// warm Lambda invocations too: it lives as long as the process). A token
// signed with a key id it does not know triggers one refetch, at most one
// per refetchInterval whatever the traffic, so forged kids cannot make the
// gateway hammer the authorization server. It implements oidc.KeySet.
type keySet struct {
	url             string
	client          *http.Client
	algs            []jose.SignatureAlgorithm
	refetchInterval time.Duration
	maxAge          time.Duration
	now             func() time.Time

	mu        sync.RWMutex
	keys      []jose.JSONWebKey
	fetchedAt time.Time // last fetch attempt that succeeded
	triedAt   time.Time // last fetch attempt
	kidAt     time.Time // last fetch caused by an unknown kid
	lastErr   error

	fetchMu    sync.Mutex // one fetch at a time
	refreshing atomic.Bool
	fetches    atomic.Int64
}

// refreshKid asks refetch for a background refresh.
const refreshKid = "\x00refresh"

// maxJWKSBytes bounds a JWKS response.
const maxJWKSBytes = 1 << 20

// VerifySignature implements oidc.KeySet: it verifies the JWS with the key
// named by its kid and returns the payload.
func (k *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(raw, k.algs)
	if err != nil {
		return nil, fmt.Errorf("malformed token: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("token must carry exactly one signature")
	}
	kid := jws.Signatures[0].Header.KeyID
	keys, err := k.current(ctx)
	if err != nil {
		return nil, err
	}
	if key, ok := find(keys, kid); ok {
		return verifyWith(jws, key)
	}
	// Unknown kid: the authorization server may have rotated its keys.
	keys, err = k.refetch(ctx, kid)
	if err != nil {
		return nil, err
	}
	if key, ok := find(keys, kid); ok {
		return verifyWith(jws, key)
	}
	return nil, fmt.Errorf("%w: no key with id %q in the authorization server's key set", auth.ErrInvalidToken, kid)
}

func verifyWith(jws *jose.JSONWebSignature, key jose.JSONWebKey) ([]byte, error) {
	if key.Algorithm != "" && key.Algorithm != jws.Signatures[0].Header.Algorithm {
		return nil, fmt.Errorf("%w: token algorithm %s does not match its key's %s", auth.ErrInvalidToken, jws.Signatures[0].Header.Algorithm, key.Algorithm)
	}
	if key.Use != "" && key.Use != "sig" {
		return nil, fmt.Errorf("%w: key %q is not a signing key", auth.ErrInvalidToken, key.KeyID)
	}
	payload, err := jws.Verify(key.Key)
	if err != nil {
		return nil, fmt.Errorf("%w: bad signature", auth.ErrInvalidToken)
	}
	return payload, nil
}

// find returns the public key with the kid (any signing key when the
// token names none and the set has exactly one).
func find(keys []jose.JSONWebKey, kid string) (jose.JSONWebKey, bool) {
	if kid == "" {
		if len(keys) == 1 {
			return keys[0], true
		}
		return jose.JSONWebKey{}, false
	}
	for _, key := range keys {
		if key.KeyID == kid {
			return key, true
		}
	}
	return jose.JSONWebKey{}, false
}

// current returns the cached keys, fetching them on first use; a set
// older than maxAge is refreshed in the background.
func (k *keySet) current(ctx context.Context) ([]jose.JSONWebKey, error) {
	k.mu.RLock()
	keys, at := k.keys, k.fetchedAt
	k.mu.RUnlock()
	if at.IsZero() {
		return k.refetch(ctx, "")
	}
	if k.now().Sub(at) > k.maxAge && k.refreshing.CompareAndSwap(false, true) {
		go func() {
			defer k.refreshing.Store(false)
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			k.refetch(fctx, refreshKid)
		}()
	}
	return keys, nil
}

// refetch fetches the key set unless another fetch ran within
// refetchInterval (or found kid meanwhile).
func (k *keySet) refetch(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	k.fetchMu.Lock()
	defer k.fetchMu.Unlock()
	k.mu.RLock()
	keys, tried, kidAt, lastErr, have := k.keys, k.triedAt, k.kidAt, k.lastErr, !k.fetchedAt.IsZero()
	k.mu.RUnlock()
	now := k.now()
	switch {
	case !have:
		// First load: retried at most once per interval while it fails.
		if !tried.IsZero() && now.Sub(tried) < k.refetchInterval {
			return nil, fmt.Errorf("%w: %v", auth.ErrTokenCheckUnavailable, lastErr)
		}
	case kid == "":
		return keys, nil
	case kid == refreshKid:
		// background refresh of an old set
	default:
		if _, ok := find(keys, kid); ok {
			return keys, nil // another request fetched it meanwhile
		}
		if !kidAt.IsZero() && now.Sub(kidAt) < k.refetchInterval {
			return keys, nil // rate-limited: the kid stays unknown
		}
		k.mu.Lock()
		k.kidAt = now
		k.mu.Unlock()
	}
	fresh, err := k.fetch(ctx)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.triedAt = now
	if err != nil {
		k.lastErr = err
		if !have {
			return nil, fmt.Errorf("%w: %v", auth.ErrTokenCheckUnavailable, err)
		}
		return k.keys, nil // keep using the keys we have
	}
	k.keys, k.fetchedAt, k.lastErr = fresh, k.triedAt, nil
	return fresh, nil
}

func (k *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	k.fetches.Add(1)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch the authorization server's keys: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes))
	if err != nil {
		return nil, fmt.Errorf("fetch the authorization server's keys: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch the authorization server's keys: %s answered HTTP %d", k.url, resp.StatusCode)
	}
	// Decode key by key so that one key of an unsupported type does not
	// hide the others.
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("the key set at %s is not a JWKS: %w", k.url, err)
	}
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		var key jose.JSONWebKey
		if err := key.UnmarshalJSON(raw); err != nil {
			continue
		}
		if !key.IsPublic() {
			key = key.Public() // never keep private parts, and never use a symmetric key
		}
		if key.Key == nil || !key.Valid() {
			continue
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("the key set at %s has no usable public signing key", k.url)
	}
	return keys, nil
}
