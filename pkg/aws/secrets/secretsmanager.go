package secrets

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
)

// secretEntry caches one Secrets Manager secret.
type secretEntry struct {
	value    string
	found    bool      // the secret exists (else ResourceNotFoundException)
	loaded   bool      // value/found hold a good read
	loadedAt time.Time // when it was read
	nextTry  time.Time // no call before this, after a failed read
	lastErr  error     // the failed first read, answered until nextTry
	reading  chan struct{}
	// reading is closed when the read in flight ends; nil when there is
	// none. Lookups of the name meanwhile wait for it instead of calling
	// Secrets Manager themselves.
}

// secret returns the Secrets Manager secret <prefix>name: cached for the
// TTL, read with one GetSecretValue otherwise, shared by concurrent
// lookups of the name.
func (r *Resolver) secret(ctx context.Context, name string) (string, bool, error) {
	for {
		r.mu.Lock()
		e := r.secrets[name]
		if e == nil {
			e = &secretEntry{}
			r.secrets[name] = e
		}
		now := r.now()
		if e.loaded && now.Sub(e.loadedAt) < r.ttl {
			v, ok := e.value, e.found
			r.mu.Unlock()
			return v, ok, nil
		}
		if ch := e.reading; ch != nil {
			r.mu.Unlock()
			select {
			case <-ch:
				continue // answered, or its caller gave up: look again
			case <-ctx.Done():
				return "", false, ctx.Err()
			}
		}
		if now.Before(e.nextTry) {
			v, ok, loaded, err := e.value, e.found, e.loaded, e.lastErr
			r.mu.Unlock()
			if loaded {
				return v, ok, nil // stale, but the refresh failed a moment ago
			}
			return "", false, err
		}
		ch := make(chan struct{})
		e.reading = ch
		r.mu.Unlock()

		v, found, err := r.getSecretValue(ctx, name)

		r.mu.Lock()
		e.reading = nil
		close(ch)
		if err != nil {
			// A caller that gave up does not make the others wait.
			if ctx.Err() == nil {
				e.nextTry = now.Add(r.retry)
			}
			if e.loaded {
				v, ok, at := e.value, e.found, e.loadedAt
				r.mu.Unlock()
				r.log.Warn("could not refresh a secret from Secrets Manager; using the value read before",
					"secret", r.prefix+name, "read_at", at, "error", err)
				return v, ok, nil
			}
			e.lastErr = err
			r.mu.Unlock()
			return "", false, err
		}
		e.value, e.found, e.loaded, e.loadedAt, e.lastErr = v, found, true, now, nil
		r.mu.Unlock()
		return v, found, nil
	}
}

// getSecretValue calls GetSecretValue for <prefix>name. found is false
// when Secrets Manager answers ResourceNotFoundException.
func (r *Resolver) getSecretValue(ctx context.Context, name string) (value string, found bool, err error) {
	id := r.prefix + name
	out, err := r.sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
	if err != nil {
		var nf *types.ResourceNotFoundException
		if errors.As(err, &nf) {
			r.log.Info("secret not in Secrets Manager", "secret", id)
			return "", false, nil
		}
		return "", false, fmt.Errorf("reading Secrets Manager secret %s: %w", id, err)
	}
	if out.SecretString == nil {
		return "", false, fmt.Errorf("the Secrets Manager secret %s holds binary data (SecretBinary), not a string: store the value with --secret-string", id)
	}
	r.log.Info("read secret from Secrets Manager", "secret", id, "version_id", aws.ToString(out.VersionId))
	return *out.SecretString, true, nil
}
