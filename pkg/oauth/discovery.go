package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// serverMetadata is the part of the authorization server's metadata
// (RFC 8414 or OpenID Connect Discovery) the resource server uses.
type serverMetadata struct {
	Issuer                string   `json:"issuer"`
	JWKSURI               string   `json:"jwks_uri"`
	IntrospectionEndpoint string   `json:"introspection_endpoint"`
	ScopesSupported       []string `json:"scopes_supported"`
}

// discover fetches the issuer's metadata: RFC 8414's
// /.well-known/oauth-authorization-server (inserted before the issuer's
// path), then OpenID Connect's <issuer>/.well-known/openid-configuration.
// The document must name the configured issuer exactly (RFC 8414 §3.3).
func discover(ctx context.Context, client *http.Client, issuer string) (serverMetadata, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return serverMetadata{}, err
	}
	path := strings.TrimSuffix(u.Path, "/")
	candidates := []string{
		u.Scheme + "://" + u.Host + "/.well-known/oauth-authorization-server" + path,
		strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration",
	}
	var errs []string
	for _, c := range candidates {
		md, status, err := fetchMetadata(ctx, client, c)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if status == http.StatusNotFound {
			errs = append(errs, c+": HTTP 404")
			continue
		}
		if md.Issuer != issuer {
			return serverMetadata{}, fmt.Errorf("the metadata at %s names issuer %q, not the configured %q", c, md.Issuer, issuer)
		}
		if md.JWKSURI == "" {
			return serverMetadata{}, fmt.Errorf("the metadata at %s names no jwks_uri", c)
		}
		return md, nil
	}
	return serverMetadata{}, fmt.Errorf("discover the authorization server %s: %s", issuer, strings.Join(errs, "; "))
}

func fetchMetadata(ctx context.Context, client *http.Client, u string) (serverMetadata, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return serverMetadata{}, 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return serverMetadata{}, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes))
	if err != nil {
		return serverMetadata{}, 0, fmt.Errorf("%s: %w", u, err)
	}
	if resp.StatusCode == http.StatusNotFound {
		return serverMetadata{}, resp.StatusCode, nil
	}
	if resp.StatusCode != http.StatusOK {
		return serverMetadata{}, resp.StatusCode, fmt.Errorf("%s: HTTP %d", u, resp.StatusCode)
	}
	var md serverMetadata
	if err := json.Unmarshal(body, &md); err != nil {
		return serverMetadata{}, resp.StatusCode, fmt.Errorf("%s: not a metadata document: %w", u, err)
	}
	return md, resp.StatusCode, nil
}
