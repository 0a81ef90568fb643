package local

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestErrorBodiesReadable: the JSON error bodies clients show to people
// (mcp-remote prints them as they are) carry "<", ">" and "&" as written,
// not Go's HTML-safe \u003c escapes: the 401 of a request without a key,
// a REST 404 and 400, and a console 404.
func TestErrorBodiesReadable(t *testing.T) {
	e := startGateway(t, "", nil)
	for _, c := range []struct {
		method, path, key, body, want string
	}{
		{"POST", "/mcp", "", `{}`, "<"},
		{"GET", "/tool-rag/tool/echo__%3Cnope%3E", "k-admin", "", `echo__<nope>`},
		{"POST", "/tool-rag/retrieve", "k-admin", `{"query": "x", "<bad>": 1}`, `<bad>`},
		{"GET", "/tool-rag/admin/nope", "k-admin", "", `{whoami,overview,servers,tools,tools/{id},keys,search,usage,sync,connections}`},
	} {
		req, _ := http.NewRequest(c.method, e.srv.URL+c.path, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.key != "" {
			req.Header.Set("Authorization", "Bearer "+c.key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		body := string(b)
		if res.StatusCode < 400 || !strings.Contains(body, c.want) || strings.Contains(body, `\u003c`) || strings.Contains(body, `\u003e`) || strings.Contains(body, `\u0026`) {
			t.Errorf("%s %s: %d %s; want an error with %q as written", c.method, c.path, res.StatusCode, body, c.want)
		}
	}
}
