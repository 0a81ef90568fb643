package testenv

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// OIDCProvider is a real OpenID Connect / OAuth 2 authorization server (npm
// oidc-provider) on 127.0.0.1 with dynamic client registration, PKCE,
// refresh tokens, resource indicators and a token exchange grant, started
// by StartOIDCProvider. Its interaction approves at once as the user named
// by the x_user parameter of the authorization request.
type OIDCProvider struct {
	AuthServer
}

// The client pre-registered for token exchange (client_secret_basic).
const (
	ExchangeClientID     = "exchanger"
	ExchangeClientSecret = "exchanger-secret"
)

// StartOIDCProvider starts oidcprovider.mjs with Node 22; it stops with
// the test.
func StartOIDCProvider(t testing.TB) *OIDCProvider {
	t.Helper()
	node := Node22(t)
	mods := filepath.Join(ToolsDir(t), "npm", "node_modules")
	NPMModule(t, "oidc-provider")
	cmd := exec.Command(node, filepath.Join(Root(t), "internal", "testenv", "oidcprovider.mjs"))
	cmd.Env = append(os.Environ(), "TOOLRAG_NPM_MODULES="+mods)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start oidc-provider: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "{") {
				line <- sc.Text()
				break
			}
		}
		close(line)
		io.Copy(io.Discard, stdout)
	}()
	p := &OIDCProvider{}
	select {
	case l, ok := <-line:
		if !ok {
			t.Fatalf("oidc-provider exited: %s", stderr.String())
		}
		var v struct{ Issuer, Control string }
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("oidc-provider said %q: %v", l, err)
		}
		p.Issuer, p.control = v.Issuer, v.Control
	case <-time.After(30 * time.Second):
		t.Fatalf("oidc-provider did not start in 30s: %s", stderr.String())
	}
	return p
}

// SignToken signs a token with the provider's key carrying claims (iss,
// iat, exp and jti are set), e.g. an inbound token for the gateway.
func (p *OIDCProvider) SignToken(t testing.TB, claims map[string]any) string {
	t.Helper()
	var out struct{ Token string }
	p.call(t, "/sign", map[string]any{"claims": claims}, &out)
	return out.Token
}

// EndGrants ends the user's grants at the provider (as when they revoke
// the application there): their refresh tokens stop working.
func (p *OIDCProvider) EndGrants(t testing.TB, account string) int {
	t.Helper()
	var out struct{ Ended int }
	p.call(t, "/end-grants", map[string]string{"account": account}, &out)
	return out.Ended
}

// OIDCStats is what the provider counted.
type OIDCStats struct {
	Grants        map[string]int // token requests per grant_type
	Registrations int            // successful dynamic client registrations
}

// OIDCStats returns the provider's counts.
func (p *OIDCProvider) OIDCStats(t testing.TB) OIDCStats {
	t.Helper()
	var out OIDCStats
	p.call(t, "/stats", struct{}{}, &out)
	return out
}
