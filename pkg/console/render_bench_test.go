package console

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/usage"
)

// manyServers is staticSource with 300 servers.
type manyServers struct{ staticSource }

func (m manyServers) Servers(context.Context) ([]Server, error) {
	out := make([]Server, 300)
	for i := range out {
		out[i] = Server{ID: fmt.Sprintf("server-%03d", i), Transport: "stdio", Status: StatusUp, Tools: 33}
	}
	return out, nil
}

// BenchmarkFirstRender measures, in headless chromium, a fresh load of the
// console (signed in) until the page's table is drawn, at 10k tools and
// 300 servers:
//
//	go test -run '^$' -bench FirstRender -benchtime 20x ./pkg/console/
func BenchmarkFirstRender(b *testing.B) {
	var tools []catalog.Tool
	for i := range 10000 {
		srv := fmt.Sprintf("server-%03d", i%300)
		tools = append(tools, catalog.Tool{ID: fmt.Sprintf("%s__tool_%05d", srv, i), Server: srv, Name: fmt.Sprintf("tool_%05d", i),
			Description: strings.Repeat("Does one thing with care. ", 12), ToolType: "query", Status: "active"})
	}
	keys := []policy.Key{{ID: "root", Admin: true, SecretHash: policy.HashSecret("k-root")}}
	src := manyServers{staticSource{tools: tools, keys: keys}}
	c, err := New(Config{Source: src, Usage: usage.New(), Retrievers: []NamedRetriever{{Name: "default", Retriever: policyRetriever{tools}}}})
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/console/", c.App())
	mux.Handle("/tool-rag/admin/", auth.Middleware(auth.Config{Keys: auth.NewStaticKeys(keys)}, c.Admin()))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(testenv.Chromium(b)), chromedp.NoSandbox,
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
