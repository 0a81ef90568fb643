package awsrt

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
	"github.com/toolrag/mcp-gateway/pkg/oauth"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// BenchmarkColdStartOAuth measures what OAuth adds to a cold start: a new
// gateway (NewGatewayFunction) and its first authenticated request (initialize),
// with an API key, with a token whose issuer is discovered, and with a
// token and a configured JWKS URL (the CDK app's Cognito setup), the three
// interleaved in every iteration. Reported per variant as ms to the first
// answered request; the authorization server is on loopback, so a real
// deployment adds its network round trips (one or two HTTPS GETs).
func BenchmarkColdStartOAuth(b *testing.B) {
	e := newTestEnv(b)
	e.register(b, "echo", startEcho(b))
	e.sync(b, string(event(b, "schedule-sync.json", request{})))
	as := testenv.StartAuthServer(b)
	const resource = "https://gw.example.com/mcp"
	grants := []oauth.Grant{{Match: oauth.Match{Scope: "mcp.tools"}, Servers: map[string]policy.Rule{"echo": {}}}}
	discovered := &oauth.Config{Issuer: as.Issuer, Audience: resource, Grants: grants}
	known := &oauth.Config{Issuer: as.Issuer, Audience: resource, JWKSURL: as.Issuer + "/jwks", Grants: grants}
	token := as.Token(b, "bench", url.Values{"scope": {"mcp.tools"}, "resource": {resource}})
	variants := []struct {
		name   string
		cfg    *oauth.Config
		bearer string
	}{
		{"api-key", nil, agentSecret},
		{"oauth-discovery", discovered, token},
		{"oauth-jwks-url", known, token},
	}
	sums := make([]time.Duration, len(variants))
	b.ResetTimer()
	for range b.N {
		for i, v := range variants {
			start := time.Now()
			g, err := NewGatewayFunction(context.Background(), func() Config {
				c := e.config(b)
				c.OAuth, c.Now = v.cfg, nil
				return c
			}())
			if err != nil {
				b.Fatal(err)
			}
			r := invoke(b, lambdahttp.Dispatch(g, lambdahttp.Options{}), event(b, "http-api-initialize.json", request{auth: v.bearer}))
			sums[i] += time.Since(start)
			g.Close()
			if r.status != http.StatusOK {
				b.Fatalf("%s: %d %s", v.name, r.status, r.body)
			}
		}
	}
	for i, v := range variants {
		b.ReportMetric(float64(sums[i].Microseconds())/1000/float64(b.N), "ms/"+v.name)
	}
	b.ReportMetric(0, "ns/op")
}
