package ragapi_test

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/ragapi"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// TestErrorBodiesNotHTMLEscaped: error bodies are JSON for API clients,
// which show them as text: "<", ">" and "&" are written as they are, not
// as Go's HTML-safe \u003c escapes.
func TestErrorBodiesNotHTMLEscaped(t *testing.T) {
	r, err := retrieve.New(retrieve.Config{Tools: &memCatalog{}})
	if err != nil {
		t.Fatal(err)
	}
	api := ragapi.New(ragapi.Config{Retriever: r})
	pol := policy.For(policy.Key{ID: "k", Admin: true})
	for _, c := range []struct {
		method, path, body, want string
	}{
		{"GET", "/tool-rag/tool/" + url.PathEscape("a__<b>&c"), "", `tool \"a__<b>&c\" not found`},
		{"POST", "/tool-rag/retrieve", `{"query": "x", "<bad>": 1}`, `\"<bad>\"`},
	} {
		req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
		req = req.WithContext(policy.NewContext(req.Context(), pol))
		rec := httptest.NewRecorder()
		api.Handler().ServeHTTP(rec, req)
		body := rec.Body.String()
		if rec.Code < 400 || !strings.Contains(body, c.want) || strings.Contains(body, `\u003c`) || strings.Contains(body, `\u0026`) {
			t.Errorf("%s %s: %d %s, want an error holding %q without \\u003c escapes", c.method, c.path, rec.Code, body, c.want)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: Content-Type %q", c.method, c.path, ct)
		}
	}
}
