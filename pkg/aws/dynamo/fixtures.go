package dynamo

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/session"
)

// The sample events in events/ carry the example key and, for requests
// that continue a session, a fixture session id. SeedEventFixtures puts
// both in the tables, so that every sample works with `sam local invoke`
// as it is (`toolrag dynamo seed-events`). Never run it against a
// production deployment: the example key's secret is public.
const (
	// EventsKeyID and EventsKeySecret are the example key of events/.
	EventsKeyID     = "events-dev-full"
	EventsKeySecret = "dev-key-full-access"
	// EventsSessionID is the Mcp-Session-Id of the session samples.
	EventsSessionID = "mcp-session-5f0c3a529d8e4c71a6b92f1e8d7c6b5a"
	// EventsSessionTTL is how long the fixture session lives.
	EventsSessionTTL = 30 * 24 * time.Hour
)

// SeedEventFixtures creates the example key (granting every server in the
// registry, or servers when given) and the fixture session (renewed when
// it exists). It reports what it did.
func SeedEventFixtures(ctx context.Context, keys *KeyStore, reg *RegistryStore, sessions *SessionStore, servers []string) (string, error) {
	if len(servers) == 0 {
		all, err := reg.ListServers(ctx)
		if err != nil {
			return "", fmt.Errorf("read the registry: %w", err)
		}
		for id := range all {
			servers = append(servers, id)
		}
		sort.Strings(servers)
	}
	if len(servers) == 0 {
		return "", errors.New("the registry is empty: push it first (toolrag registry push), or name the servers the example key may use")
	}
	grants := map[string]policy.Rule{}
	for _, s := range servers {
		grants[s] = policy.Rule{}
	}
	var did []string
	err := keys.Create(ctx, policy.Key{ID: EventsKeyID, SecretHash: policy.HashSecret(EventsKeySecret), Servers: grants})
	switch {
	case err == nil:
		did = append(did, fmt.Sprintf("created key %q (Bearer %s) for %s", EventsKeyID, EventsKeySecret, strings.Join(servers, ", ")))
	case errors.Is(err, ErrExists):
		did = append(did, fmt.Sprintf("key %q exists", EventsKeyID))
	default:
		return "", err
	}
	if err := sessions.Delete(ctx, EventsSessionID); err != nil {
		return "", err
	}
	// The sample events' session belongs to their key: a session answers
	// only the principal that opened it.
	owner := auth.KeyPrincipal(policy.Key{ID: EventsKeyID, SecretHash: policy.HashSecret(EventsKeySecret)})
	if err := sessions.Create(ctx, EventsSessionID, owner, EventsSessionTTL); err != nil {
		return "", err
	}
	if !session.ValidID(EventsSessionID) {
		return "", fmt.Errorf("fixture session id %q is malformed", EventsSessionID)
	}
	did = append(did, fmt.Sprintf("session %s live for %s", EventsSessionID, EventsSessionTTL))
	return strings.Join(did, "; "), nil
}
