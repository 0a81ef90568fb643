package dynamo

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// CheckGrants refuses a key that grants a server the registry table does
// not have, naming the key and the ids (`toolrag keys create` runs it
// before storing a key): a typo would otherwise silently grant nothing.
func (s *RegistryStore) CheckGrants(ctx context.Context, k policy.Key) error {
	servers, err := s.ListServers(ctx)
	if err != nil {
		return fmt.Errorf("read the registry to check the key's grants: %w", err)
	}
	unknown := policy.UnknownServers(k, func(id string) bool { _, ok := servers[id]; return ok })
	if len(unknown) > 0 {
		quoted := make([]string, len(unknown))
		for i, id := range unknown {
			quoted[i] = fmt.Sprintf("server %q", id)
		}
		return fmt.Errorf("key %q grants %s, not in the registry table (push it first with `toolrag registry push`, or fix the id)", k.ID, strings.Join(quoted, ", "))
	}
	return nil
}
