package upstream

// Per-principal connections: a server whose auth is per principal
// (ServerConfig.Auth, pkg/upauth) is reached, for a call that carries a
// Credential, over that principal's own connection (its own MCP session),
// sending that principal's headers and none of the configured ones; a
// call without one (the catalog sync, health probes) uses the server's
// shared connection and its configured headers (its catalog credential). The credential's headers are read on every HTTP request, so a
// refreshed token is used at once without a new session.

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/upauth"
)

// ErrUnauthorized: the server answered HTTP 401, refusing the credential
// it was sent (expired, revoked, or none).
var ErrUnauthorized = errors.New("the upstream server refused the credential (HTTP 401)")

// Credential is one caller's credential for one per-principal server.
type Credential struct {
	Principal string
	// Headers are sent on every request of the principal's connection,
	// over the server's configured headers (e.g. Authorization).
	Headers map[string]string
}

type credentialKey struct{}

// WithCredential returns ctx carrying c: calls made with it to a
// per-principal server go over c.Principal's connection with c.Headers.
func WithCredential(ctx context.Context, c Credential) context.Context {
	return context.WithValue(ctx, credentialKey{}, c)
}

func credentialFrom(ctx context.Context) (Credential, bool) {
	c, ok := ctx.Value(credentialKey{}).(Credential)
	return c, ok && c.Principal != ""
}

// principalConn is one principal's connection to a server.
type principalConn struct {
	b       *httpBackend
	headers atomic.Pointer[map[string]string]
	used    atomic.Int64 // unix ns of the last call
}

// principals holds a server's per-principal connections.
type principals struct {
	mu    sync.Mutex
	conns map[string]*principalConn
}

// backendFor returns the backend a call of ctx to s goes over.
func (m *Manager) backendFor(ctx context.Context, s *server) backend {
	if !upauth.PerPrincipal(s.cfg.Auth) || s.cfg.Transport == TransportStdio {
		return s.b
	}
	cred, ok := credentialFrom(ctx)
	if !ok && len(s.cfg.Headers) == 0 {
		// No catalog credential configured: the gateway's own requests
		// (tool list sync) go with a connected principal's grant, if any.
		if f := m.catalogCred.Load(); f != nil {
			cred, ok = (*f)(ctx, s.id)
		}
	}
	if !ok {
		return s.b
	}
	s.pp.mu.Lock()
	defer s.pp.mu.Unlock()
	if s.pp.conns == nil {
		s.pp.conns = map[string]*principalConn{}
	}
	pc := s.pp.conns[cred.Principal]
	if pc == nil {
		pc = &principalConn{}
		// The server's configured headers are its catalog credential
		// (tool lists, health probes): never sent on a caller's connection.
		cfg := s.cfg
		cfg.Headers = nil
		b := newHTTPBackend(s.id, cfg, &m.opts, m.log, m.http, m)
		b.headerFunc = func(context.Context) map[string]string {
			if h := pc.headers.Load(); h != nil {
				return *h
			}
			return nil
		}
		pc.b = b
		s.pp.conns[cred.Principal] = pc
	}
	h := maps.Clone(cred.Headers)
	pc.headers.Store(&h)
	pc.used.Store(time.Now().UnixNano())
	return pc.b
}

// reapPrincipals stops the principal connections idle for longer than idle.
func (s *server) reapPrincipals(now time.Time, idle time.Duration) {
	if idle <= 0 {
		return
	}
	var stop []*principalConn
	s.pp.mu.Lock()
	for p, pc := range s.pp.conns {
		if now.Sub(time.Unix(0, pc.used.Load())) > idle {
			stop = append(stop, pc)
			delete(s.pp.conns, p)
		}
	}
	s.pp.mu.Unlock()
	for _, pc := range stop {
		go pc.b.stop()
	}
}

// stopPrincipals stops every principal connection of s.
func (s *server) stopPrincipals() {
	s.pp.mu.Lock()
	list := make([]*principalConn, 0, len(s.pp.conns))
	for _, pc := range s.pp.conns {
		list = append(list, pc)
	}
	s.pp.conns = nil
	s.pp.mu.Unlock()
	for _, pc := range list {
		pc.b.stop()
	}
}

// DropPrincipal closes a principal's connections to every server (after
// their grant is revoked), so no session opened with it is used again.
func (m *Manager) DropPrincipal(principal string) {
	m.mu.RLock()
	list := m.serverList()
	m.mu.RUnlock()
	for _, s := range list {
		s.pp.mu.Lock()
		pc := s.pp.conns[principal]
		delete(s.pp.conns, principal)
		s.pp.mu.Unlock()
		if pc != nil {
			go pc.b.stop()
		}
	}
}

// unauthorized words an HTTP 401 of the server.
func unauthorized(err error) *problem {
	return newProblem(ErrUnauthorized, err, "the server refused the credential it was sent (HTTP 401)")
}

// ServerConfig returns the configuration of server id.
func (m *Manager) ServerConfig(id string) (ServerConfig, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s, ok := m.servers[id]
	if !ok {
		return ServerConfig{}, false
	}
	return s.cfg, true
}

// AnyPerPrincipal reports whether any configured server's auth is per
// principal.
func AnyPerPrincipal(cfgs map[string]ServerConfig) bool {
	for _, c := range cfgs {
		if upauth.PerPrincipal(c.Auth) {
			return true
		}
	}
	return false
}

// CatalogCredential supplies the credential of the gateway's own requests
// (the tool list sync) to a per-principal server that has no configured
// headers: a connected principal's (pkg/upconnect).
type CatalogCredential func(ctx context.Context, server string) (Credential, bool)

// SetCatalogCredential sets the catalog credential source (nil: none).
func (m *Manager) SetCatalogCredential(f CatalogCredential) {
	if f == nil {
		m.catalogCred.Store(nil)
		return
	}
	m.catalogCred.Store(&f)
}
