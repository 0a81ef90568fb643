package testenv

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
)

// UserAgent is a user's browser in a connect flow: a cookie jar, and
// redirects followed by hand so that the test acts as the user at the
// gateway's connect link and at the authorization server.
type UserAgent struct {
	t testing.TB
	c *http.Client
}

// NewUserAgent returns a browser with an empty cookie jar.
func NewUserAgent(t testing.TB) *UserAgent {
	jar, _ := cookiejar.New(nil)
	return &UserAgent{t: t, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Do sends req and returns the status, the Location header and the body.
func (b *UserAgent) Do(req *http.Request) (status int, location, body string) {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	buf, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(buf)
}

// Connect signs in on a gateway's connect link with the API key key and
// returns the authorization URL the gateway redirects to.
func (b *UserAgent) Connect(link, key string) (authorize string) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, link, strings.NewReader(url.Values{"key": {key}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	code, loc, body := b.Do(req)
	if code != http.StatusSeeOther {
		b.t.Fatalf("connect link: %d %s", code, body)
	}
	return loc
}

// Approve approves the authorization request authorize at the
// authorization server (StartAuthServer) as user and follows its one
// redirect to the gateway's callback; it returns the callback's status
// and page.
func (b *UserAgent) Approve(authorize, user string) (int, string) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, authorize+"&x_user="+url.QueryEscape(user), nil)
	code, loc, body := b.Do(req)
	if code != http.StatusFound && code != http.StatusSeeOther {
		b.t.Fatalf("authorization server: %d %s", code, body)
	}
	req, _ = http.NewRequest(http.MethodGet, loc, nil)
	code, _, body = b.Do(req)
	return code, body
}

// ApproveAt follows the authorization request authorize as user through
// the provider's interaction (StartOIDCProvider: several redirects) to
// callback, the gateway's; it returns the callback's status and page.
func (b *UserAgent) ApproveAt(authorize, user, callback string) (int, string) {
	b.t.Helper()
	next := authorize + "&x_user=" + url.QueryEscape(user)
	for range 10 {
		req, _ := http.NewRequest(http.MethodGet, next, nil)
		code, loc, body := b.Do(req)
		if strings.HasPrefix(next, callback) {
			return code, body
		}
		if code != http.StatusFound && code != http.StatusSeeOther {
			b.t.Fatalf("authorization server at %s: %d %s", next, code, body)
		}
		u, err := url.Parse(next)
		if err != nil {
			b.t.Fatal(err)
		}
		l, err := u.Parse(loc)
		if err != nil {
			b.t.Fatal(err)
		}
		next = l.String()
	}
	b.t.Fatalf("no redirect to %s", callback)
	return 0, ""
}
