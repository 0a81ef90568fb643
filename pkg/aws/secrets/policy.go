package secrets

import (
	"fmt"
	"os"
	"strings"
)

// Which names a ${VAR} in an upstream server's config may read. A registry
// entry or manifest is written by whoever adds the server, and its headers
// go to a URL of their choosing, so ${VAR} must not reach the gateway's own
// settings or the platform's credentials:
//
//   - a reserved name (Reserved) is refused everywhere, even in the
//     store: AWS_*, LAMBDA_*, ECS_*, names starting with "_", TOOL_RAG_*,
//     MCP_GATEWAY_*, and TOOLRAG_* other than TOOLRAG_UPSTREAM_*;
//   - the process environment is read only for TOOLRAG_UPSTREAM_* and the
//     names the operator lists in TOOL_RAG_UPSTREAM_ENV (EnvAllowed);
//   - any other valid name is read from the store only (the SSM parameter
//     or Secrets Manager secret <prefix>VAR), whose prefix the operator
//     chose for upstream secrets.
const (
	// UpstreamPrefix starts the environment variables every registry
	// header may read.
	UpstreamPrefix = "TOOLRAG_UPSTREAM_"
	// HopPrefix starts the secrets-store names of the bridge hop
	// credentials (awsrt.HopSecretPrefix).
	HopPrefix = "TOOLRAG_HOP_"
	// AllowEnvSetting names the setting that lists further environment
	// variables registry headers may read (comma- or space-separated).
	AllowEnvSetting = "TOOL_RAG_UPSTREAM_ENV"
)

// reservedPrefixes are the environment of the gateway and its platform.
var reservedPrefixes = []string{"AWS_", "AMAZON_", "LAMBDA_", "ECS_", "_", "TOOL_RAG_", "MCP_GATEWAY_", "TOOLRAG_"}

// Reserved returns an error when name is the gateway's or the platform's
// own variable, which no upstream config may read; nil otherwise.
func Reserved(name string) error {
	up := strings.ToUpper(name)
	if strings.HasPrefix(up, UpstreamPrefix) && len(up) > len(UpstreamPrefix) {
		return nil
	}
	// The hop credentials of the Fargate stdio servers: secrets the stacks
	// create in the secrets store (never read from the environment, which
	// EnvAllowed does not allow for them).
	if strings.HasPrefix(up, HopPrefix) && len(up) > len(HopPrefix) {
		return nil
	}
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(up, p) {
			return fmt.Errorf("%s is reserved for the gateway and its platform (%s*): upstream configs may read %s* variables, names listed in %s, and the secrets store",
				name, p, UpstreamPrefix, AllowEnvSetting)
		}
	}
	return nil
}

// EnvAllowed reports whether a ${VAR} in an upstream config may be read
// from the process environment: a name that is not Reserved and starts
// with UpstreamPrefix or is listed in getenv(AllowEnvSetting).
func EnvAllowed(name string, getenv func(string) string) bool {
	if Reserved(name) != nil {
		return false
	}
	if strings.HasPrefix(name, UpstreamPrefix) {
		return true
	}
	if getenv == nil {
		return false
	}
	for _, n := range strings.FieldsFunc(getenv(AllowEnvSetting), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		if n == name {
			return true
		}
	}
	return false
}

// NotAllowedError is the error for a name the environment may not give
// (it is neither TOOLRAG_UPSTREAM_* nor listed) when there is no store.
type NotAllowedError struct{ Name string }

func (e *NotAllowedError) Error() string {
	return fmt.Sprintf("environment variable %s may not be read by registry headers: name it %s%s, or list it in %s",
		e.Name, UpstreamPrefix, e.Name, AllowEnvSetting)
}

// RefNames returns the names s refers to as ${VAR} or $VAR, in order, the
// way the registry loader expands them.
func RefNames(s string) []string {
	var names []string
	os.Expand(s, func(name string) string {
		names = append(names, name)
		return ""
	})
	return names
}
