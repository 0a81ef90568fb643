package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolrag/mcp-gateway/internal/localtest"
	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// keys are the browser test's API keys: an admin, an agent of both echo
// servers and one narrowed to some echo tools.
const keys = `keys:
  - id: admin
    secret: "k-admin"
    admin: true
    servers: {echo: {}, echohttp: {}}
  - id: agent
    secret: "k-agent"
    servers: {echo: {}, echohttp: {}}
  - id: narrow
    secret: "k-narrow"
    servers:
      echo:
        tool_prefixes: ["echo", "add"]
`

// startGateway starts the local runtime on a temporary configuration: the
// stdio servers/echo as "echo" plus extraRegistry, synced once, served by
// an httptest server.
func startGateway(t *testing.T, extraRegistry string, vars map[string]string) *localtest.Gateway {
	t.Helper()
	return startGatewayKeys(t, extraRegistry, keys, vars)
}

// startGatewayKeys is startGateway with the keys document keyDoc.
func startGatewayKeys(t *testing.T, extraRegistry, keyDoc string, vars map[string]string) *localtest.Gateway {
	t.Helper()
	registry := fmt.Sprintf("servers:\n  echo:\n    transport: stdio\n    command: %q\n%s", testenv.GoBinary(t, "./servers/echo"), extraRegistry)
	return localtest.Start(t, localtest.Options{Registry: registry, Keys: keyDoc, Env: vars})
}

// browser starts Debian's chromium headless (as root, so without its
// sandbox; without background networking, which this machine refuses)
// and returns a tab and the console messages and errors it logged.
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first action starts the browser and must run on ctx itself: the
	// browser lives as long as the context of its first action.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	var mu sync.Mutex
	var logged []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException || m.Type == chromedp.ConsoleWarning {
				mu.Lock()
				logged = append(logged, string(m.Type)+": "+m.Text)
				mu.Unlock()
			}
		}
	}()
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), logged...)
	}
}

// run runs browser actions within a bounded time.
func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		dump, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		page, _ := chromedp.Run(dump, chromedp.OuterHTML(chromedp.CSS("body")))
		t.Fatalf("%s: %v\npage: %.3000s", what, err, page)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// screenshotDir is where the browser tests leave their screenshots
// (gitignored results/, or $TOOLRAG_SCREENSHOTS).
func screenshotDir(t *testing.T) string {
	dir := os.Getenv("TOOLRAG_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(testenv.Root(t), "results", "console")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil || len(png) < 1000 {
		t.Fatalf("screenshot %s: %v (%d bytes)", name, err, len(png))
	}
	if err := os.WriteFile(filepath.Join(screenshotDir(t), name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// noHorizontalScroll checks that the page fits the viewport's width
// (tables scroll inside their own box).
func noHorizontalScroll(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	if w := eval[[]int](t, ctx, `[document.documentElement.scrollWidth, window.innerWidth]`); w[0] > w[1] {
		t.Errorf("%s: the page is %d px wide in a %d px viewport", where, w[0], w[1])
	}
}

func signIn(t *testing.T, ctx context.Context, key string) {
	t.Helper()
	run(t, ctx, "sign in",
		chromedp.WaitVisible(chromedp.ID("key")),
		chromedp.SetValue(chromedp.ID("key"), key),
		chromedp.Click(chromedp.ID("signin")))
}

// TestConsoleInBrowser drives the console in headless chromium against a
// real local gateway (echo over stdio and over HTTP): sign-in, the servers
// page seeing an upstream go down, the catalog, the playground against
// /tool-rag/retrieve, usage, and both viewport sizes.
func TestConsoleInBrowser(t *testing.T) {
	echoURL, stopEcho := testenv.StartEchoAt(t, "127.0.0.1:0")
	e := startGateway(t, fmt.Sprintf("  echohttp:\n    transport: streamable_http\n    url: %q\n", echoURL),
		map[string]string{"TOOL_RAG_HEALTHCHECK_INTERVAL": "1", "TOOL_RAG_HEALTHCHECK_TIMEOUT": "1"})
	bg, stopBG := context.WithCancel(context.Background())
	t.Cleanup(stopBG)
	e.Runtime.Background(bg)
	// Some traffic for the usage page.
	c, _ := testenv.Connect(t, e.URL, testenv.MCPClient{Key: "k-agent", Name: "browser"})
	for range 3 {
		if _, err := testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": "echo__echo", "arguments": map[string]any{"text": "hi"}}); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": "echo__fail", "arguments": map[string]any{}})
	// Retrievals for the overview and usage pages: one find_tools, one
	// REST retrieval.
	if _, err := testenv.CallTool(c, 30*time.Second, "find_tools", map[string]any{"query": "reverse a string"}); err != nil {
		t.Fatal(err)
	}
	retrieveIDs(t, e.Server.URL, "k-agent", "book a table at a restaurant for four")

	ctx, logged := browser(t)
	base := e.Server.URL + "/console/"
	run(t, ctx, "open the console", chromedp.Navigate(base), chromedp.WaitVisible(chromedp.ID("signin-form")))

	t.Run("a non-admin key is refused", func(t *testing.T) {
		signIn(t, ctx, "k-agent")
		run(t, ctx, "read the refusal", chromedp.WaitVisible(`//p[@id="signin-error" and contains(., "not an admin")]`))
		msg := eval[string](t, ctx, `document.getElementById("signin-error").textContent`)
		navHidden := eval[bool](t, ctx, `document.getElementById("nav").hidden`)
		if !navHidden || !strings.Contains(msg, "admin key") {
			t.Errorf("non-admin sign-in: nav hidden %v, message %q", navHidden, msg)
		}
		signIn(t, ctx, "wrong-key")
		run(t, ctx, "read the refusal", chromedp.WaitVisible(`//p[@id="signin-error" and contains(., "not valid")]`))
	})

	t.Run("overview", func(t *testing.T) {
		signIn(t, ctx, "k-admin")
		// A first visit lands on the overview: what is connected, the
		// catalog, the recent calls and errors, the retrievals.
		run(t, ctx, "overview", chromedp.WaitVisible(chromedp.CSS(`#ov-servers li[data-server="echohttp"][data-status="up"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#ov-servers li[data-server="echo"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#ov-calls tr[data-outcome="ok"]`)),
			chromedp.WaitVisible(`//ul[@id="ov-errors"]/li[@data-call="echo__fail"]`),
			chromedp.WaitVisible(chromedp.CSS(`#ov-retrievals .retrieval-count`)),
			chromedp.WaitVisible(chromedp.CSS(`#ov-timeline svg path.p50`)))
		got := eval[map[string]string](t, ctx, `({
			retrievals: document.querySelector("#ov-retrievals .retrieval-count").textContent,
			weak: [...document.querySelectorAll("#ov-retrievals [data-match]")].map(e => e.textContent).join(" | "),
			calls: String(document.querySelectorAll("#ov-calls tbody tr").length),
			catalog: document.getElementById("ov-catalog").textContent,
			sync: document.getElementById("ov-sync").textContent,
			page: location.hash})`)
		if got["retrievals"] != "2 retrievals (1 find_tools, 1 REST) · 2 queries" {
			t.Errorf("retrieval count on the overview = %q, want 2 (1 find_tools, 1 REST)", got["retrievals"])
		}
		if !strings.Contains(got["weak"], "strong") || !strings.Contains(got["weak"], "%") {
			t.Errorf("match levels on the overview = %q", got["weak"])
		}
		if got["calls"] != "4" || !strings.HasSuffix(got["catalog"], " tools") || got["catalog"] == "0 tools" || got["sync"] == "last sync never" {
			t.Errorf("overview: %v", got)
		}
		screenshot(t, ctx, "overview-1280")
		noHorizontalScroll(t, ctx, "overview at 1280x800")
		noMidWordBreaks(t, ctx, "overview at 1280x800")
		if os.Getenv("TOOLRAG_DOCS_SCREENSHOT") == "1" {
			docsScreenshot(t, ctx)
		}
	})

	t.Run("servers", func(t *testing.T) {
		run(t, ctx, "servers table", chromedp.Navigate(base+"#servers"), chromedp.WaitVisible(chromedp.CSS(`tr[data-server="echohttp"][data-status="up"]`)),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-server="echo"]`)))
		stored := eval[string](t, ctx, `JSON.stringify({local: Object.keys(localStorage), cookie: document.cookie, url: location.href})`)
		if strings.Contains(stored, "k-admin") || strings.Contains(stored, "toolrag") {
			t.Errorf("the key is kept beyond the tab's session storage: %s", stored)
		}
		screenshot(t, ctx, "servers-1280")
		noHorizontalScroll(t, ctx, "servers at 1280x800")
		// Sync now answers with a sentence, not raw JSON.
		run(t, ctx, "sync now", chromedp.Click(chromedp.ID("sync-now")),
			chromedp.WaitVisible(`//p[@id="action-status" and contains(., "Synced")]`))
		if msg := eval[string](t, ctx, `document.getElementById("action-status").textContent`); !strings.HasPrefix(msg, "Sync: Synced 2 of 2 servers in ") || strings.Contains(msg, "{") || strings.Contains(msg, "_ns") {
			t.Errorf("sync result = %q, want a sentence", msg)
		}
		stopEcho()
		// One health interval is 1 s; the page polls every 2 s.
		run(t, ctx, "server goes down", chromedp.WaitVisible(chromedp.CSS(`tr[data-server="echohttp"][data-status="down"]`)))
		screenshot(t, ctx, "servers-down-1280")
		// A sync while it is down marks its tools stale with the error;
		// once it answers again, its status is up and the old reason gone.
		run(t, ctx, "sync while down", chromedp.Click(chromedp.ID("sync-now")),
			chromedp.WaitVisible(`//p[@id="action-status" and contains(., "Not reached")]`))
		testenv.StartEchoAt(t, strings.TrimSuffix(strings.TrimPrefix(echoURL, "http://"), "/mcp"))
		run(t, ctx, "server back up", chromedp.WaitVisible(`//tr[@data-server="echohttp" and @data-status="up"]/td[4][not(normalize-space())]`))
	})

	t.Run("catalog", func(t *testing.T) {
		run(t, ctx, "catalog", chromedp.Navigate(base+"#catalog"), chromedp.WaitVisible(chromedp.CSS(`tr[data-tool="echo__reverse"]`)))
		run(t, ctx, "filter", chromedp.SendKeys(chromedp.ID("cat-q"), "revers"),
			chromedp.WaitNotPresent(chromedp.CSS(`tr[data-tool="echo__add"]`)),
			chromedp.Click(chromedp.CSS(`tr[data-tool="echo__reverse"]`)),
			chromedp.WaitVisible(`//aside[@id="tool-detail"]//pre[contains(., "properties")]`))
		screenshot(t, ctx, "catalog-1280")
		noHorizontalScroll(t, ctx, "catalog at 1280x800")
		noMidWordBreaks(t, ctx, "catalog at 1280x800")
	})

	t.Run("playground matches retrieve", func(t *testing.T) {
		const query = "reverse a string"
		run(t, ctx, "playground", chromedp.Navigate(base+"#playground"),
			chromedp.WaitReady(chromedp.CSS(`#play-key option[value="narrow"]`)),
			chromedp.SetValue(chromedp.ID("play-queries"), query),
			chromedp.SetValue(chromedp.ID("play-key"), "narrow"),
			chromedp.Click(chromedp.ID("play-run")),
			chromedp.WaitVisible(chromedp.CSS(`#play-results li[data-tool]`)))
		shown := eval[[]string](t, ctx, `[...document.querySelectorAll("#play-results li")].map(li => li.dataset.tool)`)
		want := retrieveIDs(t, e.Server.URL, "k-narrow", query)
		if strings.Join(shown, ",") != strings.Join(want, ",") || len(want) == 0 {
			t.Errorf("playground as key narrow shows %v; /tool-rag/retrieve with that key answers %v", shown, want)
		}
		for _, id := range shown {
			if id == "echo__reverse" {
				t.Errorf("the playground showed %s, which key narrow is not granted", id)
			}
		}
		screenshot(t, ctx, "playground-1280")
	})

	t.Run("usage", func(t *testing.T) {
		run(t, ctx, "usage", chromedp.Navigate(base+"#usage"),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-key="agent"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#lat-chart svg rect.bar`)),
			chromedp.WaitVisible(chromedp.CSS(`#timeline-chart svg path.p50`)),
			chromedp.WaitVisible(chromedp.CSS(`#usage-retrievals .retrieval-count`)))
		cells := eval[[]string](t, ctx, `[...document.querySelectorAll('tr[data-key="agent"] td')].map(td => td.textContent)`)
		if len(cells) < 5 || cells[1] != "4" || cells[2] != "1" || cells[4] != "2" {
			t.Errorf("usage row of key agent = %q, want 4 calls, 1 error and 2 retrievals", cells)
		}
		// The histogram has a count axis and the count on its bars; the
		// timeline an axis in ms.
		axis := eval[[]string](t, ctx, `[...document.querySelectorAll("#lat-chart svg text.count, #timeline-chart svg text")].map(e => e.textContent)`)
		joined := strings.Join(axis, " ")
		if !strings.Contains(joined, " ms") || !strings.Contains(joined, "p50") {
			t.Errorf("chart labels %q: want counts, ms units and a legend", axis)
		}
		counts := eval[[]string](t, ctx, `[...document.querySelectorAll("#lat-chart svg text.count")].map(e => e.textContent)`)
		sum := 0
		for _, c := range counts {
			var n int
			fmt.Sscan(c, &n)
			sum += n
		}
		if sum != 4 {
			t.Errorf("histogram bar counts %v add up to %d, want the 4 calls", counts, sum)
		}
		if got := eval[string](t, ctx, `document.querySelector("#usage-retrievals .retrieval-count").textContent`); !strings.HasPrefix(got, "3 retrievals (1 find_tools, 2 REST)") {
			t.Errorf("usage retrievals = %q (the playground's search is not counted; the test's REST retrievals are)", got)
		}
		screenshot(t, ctx, "usage-1280")
	})

	t.Run("phone viewport", func(t *testing.T) {
		run(t, ctx, "resize", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		for _, page := range []string{"overview", "servers", "catalog", "playground", "usage"} {
			run(t, ctx, page, chromedp.Navigate(base+"#"+page), chromedp.WaitVisible(chromedp.ID("page-"+page)), chromedp.Sleep(300*time.Millisecond))
			noHorizontalScroll(t, ctx, page+" at 390x844")
			screenshot(t, ctx, page+"-390")
		}
	})

	for _, msg := range logged() {
		// The refused sign-ins above answer 401 and 403, and the browser
		// asks for a favicon (404): it logs those loads as errors.
		if strings.Contains(msg, "Failed to load resource") && !strings.Contains(msg, "500") {
			continue
		}
		if strings.Contains(msg, "Content Security Policy") || strings.HasPrefix(msg, "exception") || strings.HasPrefix(msg, "error") {
			t.Errorf("browser reported: %s", msg)
		}
	}
	t.Logf("screenshots in %s", screenshotDir(t))
}

// noMidWordBreaks checks that no tool or server id wraps inside a word:
// ids break only after "_" (each part is its own text node).
func noMidWordBreaks(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	broken := eval[[]string](t, ctx, `[...document.querySelectorAll(".tid")].filter(e => e.offsetParent).flatMap(e =>
		[...e.childNodes].filter(n => n.nodeType === 3 && n.textContent.length > 1).filter(n => {
			const r = document.createRange(); r.selectNodeContents(n); return r.getClientRects().length > 1; }).map(n => n.textContent))`)
	if len(broken) > 0 {
		t.Errorf("%s: ids wrap mid-word: %q", where, broken)
	}
}

// docsScreenshot writes the overview for the README
// (docs/img/console-overview.png, kept under 150 KB).
func docsScreenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if len(png) > 150<<10 {
		t.Fatalf("the overview screenshot is %d KB; the README's image must stay under 150 KB", len(png)>>10)
	}
	name := filepath.Join(testenv.Root(t), "docs", "img", "console-overview.png")
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d KB)", name, len(png)>>10)
}

func retrieveIDs(t *testing.T, base, key, query string) []string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequest("POST", base+"/tool-rag/retrieve", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Results []struct {
			ToolID string `json:"tool_id"`
		} `json:"results"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 {
		t.Fatalf("retrieve: %d %v", res.StatusCode, err)
	}
	var ids []string
	for _, r := range out.Results {
		ids = append(ids, r.ToolID)
	}
	return ids
}

// chromium returns Debian's headless-capable chromium (installed by
// scripts/deps.sh), for the console's browser tests.
func chromium(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("TOOLRAG_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	testenv.Missing(t, "chromium (Debian package chromium)")
	return ""
}
