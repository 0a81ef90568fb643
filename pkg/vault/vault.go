// Package vault keeps the credentials the gateway holds for its callers
// toward upstream servers: one sealed grant per (principal, server).
//
// A grant is sealed before it is stored, with the principal and server as
// additional authenticated data (AES-GCM locally, the encryption context of
// KMS on AWS), so a row copied to another principal or server does not
// open. Nothing of a grant's secrets is ever logged or put in an error:
// Grant's String, GoString and LogValue print only its kind and expiry.
//
// A Vault composes a Sealer (how values are sealed) and a Rows store (where
// sealed rows live), with an in-memory cache of opened grants for a short
// TTL so a warm call costs no store or key-service round trip.
package vault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// ErrNotFound: no grant is stored for this (principal, server).
var ErrNotFound = errors.New("no connection stored for this caller and server")

// Key names one grant.
type Key struct {
	Principal string // who the grant belongs to (pkg/auth principal)
	Server    string // upstream server id
}

// aadPrefix starts the additional data of a grant.
const aadPrefix = "toolrag-vault-v1"

// aad is what binds a sealed value to its key.
func (k Key) aad() []byte {
	return []byte(aadPrefix + "\x00" + k.Principal + "\x00" + k.Server)
}

// EncryptionContext is the KMS encryption context of additional data aad:
// for a grant {"purpose": "toolrag-vault-v1", "principal": …, "server": …}
// (so a KMS key policy can name them, and CloudTrail records whose grant
// was opened); for anything else (connect links, OAuth states)
// {"purpose": aad}.
func EncryptionContext(aad []byte) map[string]string {
	if rest, ok := strings.CutPrefix(string(aad), aadPrefix+"\x00"); ok {
		if p, s, ok := strings.Cut(rest, "\x00"); ok {
			return map[string]string{"purpose": aadPrefix, "principal": p, "server": s}
		}
	}
	return map[string]string{"purpose": string(aad)}
}

// Grant kinds.
const (
	KindOAuth    = "oauth"
	KindExchange = "token_exchange"
	KindSecret   = "user_secret"
)

// Grant is one principal's credential for one server.
type Grant struct {
	Kind         string    `json:"kind"`
	AccessToken  string    `json:"access_token,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Scope        string    `json:"scope,omitempty"`
	// Secret is a user_secret's value.
	Secret string `json:"secret,omitempty"`
	// Client is what refresh and revocation need: the client id (and
	// secret of a dynamically registered client), token and revocation
	// endpoints, the resource.
	Client map[string]string `json:"client,omitempty"`
	// KeyID is the API key (or OAuth subject) id the principal
	// authenticated with, stored beside the row in clear for admin
	// revocation; never a secret.
	KeyID string `json:"-"`
}

func (g Grant) String() string {
	exp := "no expiry"
	if !g.Expiry.IsZero() {
		exp = "expires " + g.Expiry.UTC().Format(time.RFC3339)
	}
	return "grant(" + g.Kind + ", " + exp + ")"
}

// GoString keeps %#v from printing the secrets.
func (g Grant) GoString() string { return g.String() }

// LogValue keeps slog from printing the secrets.
func (g Grant) LogValue() slog.Value { return slog.StringValue(g.String()) }

// Info describes a stored grant without any of its secrets.
type Info struct {
	Principal string    `json:"-"`
	Server    string    `json:"server"`
	Kind      string    `json:"kind"`
	KeyID     string    `json:"key_id,omitempty"`
	Expiry    time.Time `json:"expires_at,omitzero"`
	Updated   time.Time `json:"connected_at"`
}

// Row is one sealed grant as a store keeps it.
type Row struct {
	Principal, Server string
	KeyID             string // the API key id, in clear (not a secret)
	Kind              string
	SealKey           string // which sealing key (local key id, or KMS key)
	Sealed            []byte
	Expiry            time.Time // zero: none (a store may drop rows after it, e.g. DynamoDB TTL)
	Updated           time.Time
}

// Rows stores sealed rows. Implementations: SQLite (local), DynamoDB (AWS).
type Rows interface {
	GetRow(ctx context.Context, k Key) (Row, error) // ErrNotFound
	PutRow(ctx context.Context, r Row) error
	DeleteRow(ctx context.Context, k Key) error
	// ListRows lists a principal's rows ("" for every row).
	ListRows(ctx context.Context, principal string) ([]Row, error)
}

// Sealer seals and opens values bound to additional data: AES-256-GCM
// under a local key file, or KMS envelope encryption on AWS.
type Sealer interface {
	Seal(ctx context.Context, plaintext, aad []byte) (sealed []byte, keyID string, err error)
	Open(ctx context.Context, sealed []byte, keyID string, aad []byte) ([]byte, error)
}

// DefaultCacheTTL is how long an opened grant is served from memory.
const DefaultCacheTTL = 30 * time.Second

// Vault stores grants sealed. It is safe for concurrent use.
type Vault struct {
	rows   Rows
	sealer Sealer
	ttl    time.Duration
	now    func() time.Time

	mu    sync.Mutex
	cache map[Key]cached
}

type cached struct {
	g     Grant
	until time.Time
}

// New returns a Vault over rows and sealer; ttl <= 0 takes DefaultCacheTTL.
func New(rows Rows, sealer Sealer, ttl time.Duration) *Vault {
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	return &Vault{rows: rows, sealer: sealer, ttl: ttl, now: time.Now, cache: map[Key]cached{}}
}

// Get returns the grant of k, from memory when it was read within the
// cache TTL.
func (v *Vault) Get(ctx context.Context, k Key) (Grant, error) {
	now := v.now()
	v.mu.Lock()
	c, ok := v.cache[k]
	v.mu.Unlock()
	if ok && now.Before(c.until) {
		return c.g, nil
	}
	r, err := v.rows.GetRow(ctx, k)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return Grant{}, ErrNotFound
		}
		return Grant{}, fmt.Errorf("read the stored connection: %w", err)
	}
	g, err := v.open(ctx, k, r)
	if err != nil {
		return Grant{}, err
	}
	v.mu.Lock()
	v.cache[k] = cached{g: g, until: now.Add(v.ttl)}
	v.mu.Unlock()
	return g, nil
}

func (v *Vault) open(ctx context.Context, k Key, r Row) (Grant, error) {
	if r.Principal != k.Principal || r.Server != k.Server {
		return Grant{}, errors.New("the stored connection does not belong to this caller and server")
	}
	pt, err := v.sealer.Open(ctx, r.Sealed, r.SealKey, k.aad())
	if err != nil {
		return Grant{}, fmt.Errorf("the stored connection could not be opened (sealed under another key or for another caller): %w", err)
	}
	var g Grant
	if err := json.Unmarshal(pt, &g); err != nil {
		return Grant{}, errors.New("the stored connection is not a valid grant")
	}
	g.KeyID = r.KeyID
	return g, nil
}

// Put seals g and stores it as k's grant, replacing any.
func (v *Vault) Put(ctx context.Context, k Key, g Grant) error {
	if k.Principal == "" || k.Server == "" {
		return errors.New("a connection needs a principal and a server")
	}
	pt, err := json.Marshal(g)
	if err != nil {
		return fmt.Errorf("encode the connection: %w", err)
	}
	sealed, keyID, err := v.sealer.Seal(ctx, pt, k.aad())
	clear(pt)
	if err != nil {
		return fmt.Errorf("seal the connection: %w", err)
	}
	now := v.now()
	r := Row{Principal: k.Principal, Server: k.Server, KeyID: g.KeyID, Kind: g.Kind, SealKey: keyID, Sealed: sealed, Expiry: rowExpiry(g), Updated: now.UTC()}
	if err := v.rows.PutRow(ctx, r); err != nil {
		return fmt.Errorf("store the connection: %w", err)
	}
	v.mu.Lock()
	v.cache[k] = cached{g: g, until: now.Add(v.ttl)}
	v.mu.Unlock()
	return nil
}

// rowExpiry is when a row is of no more use: an access token without a
// refresh token expires with it; anything else is kept.
func rowExpiry(g Grant) time.Time {
	if g.RefreshToken == "" && g.Secret == "" && !g.Expiry.IsZero() {
		return g.Expiry.UTC()
	}
	return time.Time{}
}

// Delete removes k's grant (no error when there is none).
func (v *Vault) Delete(ctx context.Context, k Key) error {
	v.Forget(k)
	if err := v.rows.DeleteRow(ctx, k); err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("delete the connection: %w", err)
	}
	return nil
}

// Forget drops k from this instance's cache.
func (v *Vault) Forget(k Key) {
	v.mu.Lock()
	delete(v.cache, k)
	v.mu.Unlock()
}

// List describes a principal's grants ("" for every principal's), without
// their secrets.
func (v *Vault) List(ctx context.Context, principal string) ([]Info, error) {
	rows, err := v.rows.ListRows(ctx, principal)
	if err != nil {
		return nil, fmt.Errorf("list connections: %w", err)
	}
	out := make([]Info, 0, len(rows))
	for _, r := range rows {
		out = append(out, Info{Principal: r.Principal, Server: r.Server, Kind: r.Kind, KeyID: r.KeyID, Expiry: r.Expiry, Updated: r.Updated})
	}
	return out, nil
}
