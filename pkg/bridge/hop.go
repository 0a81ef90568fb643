package bridge

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"

	"github.com/toolrag/mcp-gateway/pkg/auth"
)

// TokenEnv is the environment variable `toolrag bridge` reads its hop
// credential from (Config.Token). On Fargate the task definition fills it
// from the server's Secrets Manager secret; the bridge removes it from the
// stdio server's environment.
const TokenEnv = "TOOLRAG_BRIDGE_TOKEN"

// MinTokenLength is the shortest hop credential the bridge accepts: a
// shorter one is a configuration mistake, not a secret.
const MinTokenLength = 16

// hopAuth answers 401 to every request that does not carry
// "Authorization: Bearer <token>". The token is kept only as its SHA-256
// and compared in constant time; nothing of what was presented is logged
// or echoed.
func hopAuth(tokenHash [32]byte, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := auth.Bearer(r.Header.Get("Authorization"))
		sum := sha256.Sum256([]byte(got))
		if subtle.ConstantTimeCompare(sum[:], tokenHash[:]) != 1 || !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolrag-bridge"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"this bridge accepts only requests carrying its hop credential (Authorization: Bearer <the server's secret>)"}` + "\n"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func withoutVar(names []string, drop string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if n != drop {
			out = append(out, n)
		}
	}
	return out
}
