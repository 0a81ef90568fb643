package browsertest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/console"
	"github.com/toolrag/mcp-gateway/pkg/metrics/usage"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// manyServers is a console source of 300 servers and the given tools and
// keys.
type manyServers struct {
	tools []catalog.Tool
	keys  []policy.Key
}

func (m manyServers) Servers(context.Context) ([]console.Server, error) {
	out := make([]console.Server, 300)
	for i := range out {
		out[i] = console.Server{ID: fmt.Sprintf("server-%03d", i), Transport: "stdio", Status: console.StatusUp, Tools: 33}
	}
	return out, nil
}
func (m manyServers) Tools(context.Context) ([]catalog.Tool, error) { return m.tools, nil }
func (m manyServers) Keys(context.Context) ([]policy.Key, error)    { return m.keys, nil }

// policyRetriever returns every tool the request's policy allows, in
// catalog order.
type policyRetriever struct{ tools []catalog.Tool }

func (r policyRetriever) Retrieve(_ context.Context, req retrieve.Request) (retrieve.Response, error) {
	var out retrieve.Response
	for _, t := range r.tools {
		if req.Policy.AllowsTool(t.Server, t.Name) && len(out.Results) < req.TopK {
			out.Results = append(out.Results, retrieve.Result{Tool: t, Score: 1, Reason: "q=" + req.Query})
		}
	}
	return out, nil
}

// BenchmarkFirstRender measures, in headless chromium, a fresh load of the
// console (signed in) until the page's table is drawn, at 10k tools and
// 300 servers:
//
//	cd internal/browsertest && go test -run '^$' -bench FirstRender -benchtime 20x .
func BenchmarkFirstRender(b *testing.B) {
	var tools []catalog.Tool
	for i := range 10000 {
		srv := fmt.Sprintf("server-%03d", i%300)
		tools = append(tools, catalog.Tool{ID: fmt.Sprintf("%s__tool_%05d", srv, i), Server: srv, Name: fmt.Sprintf("tool_%05d", i),
			Description: strings.Repeat("Does one thing with care. ", 12), ToolType: "query", Status: "active"})
	}
	keys := []policy.Key{{ID: "root", Admin: true, SecretHash: policy.HashSecret("k-root")}}
	src := manyServers{tools: tools, keys: keys}
	c, err := console.New(console.Config{Source: src, Usage: usage.New(), Retrievers: []console.NamedRetriever{{Name: "default", Retriever: policyRetriever{tools}}}})
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/console/", c.App())
	mux.Handle("/tool-rag/admin/", auth.Middleware(auth.Config{Keys: auth.NewStaticKeys(keys)}, c.Admin()))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(b)), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(b.TempDir()), chromedp.WindowSize(1280, 800))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/console/")); err != nil {
		b.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](`sessionStorage.setItem("toolrag.console.key", "k-root")`)); err != nil {
		b.Fatal(err)
	}
	for _, page := range []struct{ name, wait string }{
		{"catalog", `#catalog-table tr[data-tool]`},
		{"servers", `#servers-table tr[data-server="server-299"]`},
	} {
		b.Run("page="+page.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				step, cancel := context.WithTimeout(ctx, 30*time.Second)
				err := chromedp.Do(step, chromedp.Navigate(fmt.Sprintf("%s/console/?n=%d#%s", srv.URL, i, page.name)),
					chromedp.WaitVisible(chromedp.CSS(page.wait)))
				cancel()
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
