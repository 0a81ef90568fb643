// Captures the tools/list of the npm MCP servers in servers/README.md into
// servers/<server>.jsonl ({"name","description","input_schema"} a line).
// Install all the packages (README.md: versions) into one scratch folder
// outside the repo first, then: node capture.mjs <scratch>/node_modules [server...]
// Placeholder values stand in for the API keys a server wants at start;
// tools/list is answered without calling the service.
import fs from "node:fs";
import path from "node:path";
const nm = process.argv[2];
if (!nm) { console.error("usage: node capture.mjs <node_modules> [server...]"); process.exit(2); }
const sdk = path.join(nm, "@modelcontextprotocol/sdk/dist/esm/client");
const { Client } = await import(path.join(sdk, "index.js"));
const { StdioClientTransport } = await import(path.join(sdk, "stdio.js"));
const B = path.join(nm, ".bin") + "/";
const here = path.dirname(new URL(import.meta.url).pathname);
const dummy = "placeholder-not-a-credential";
const home = fs.mkdtempSync("/tmp/capture-home-");
const oauth = path.join(home, "oauth.json");
fs.writeFileSync(oauth, JSON.stringify({installed: {client_id: "placeholder.apps.googleusercontent.com", client_secret: dummy, redirect_uris: ["http://localhost"]}}));
const S = {
  "airtable": ["airtable-mcp-server", [], {AIRTABLE_API_KEY: dummy}],
  "asana": ["mcp-server-asana", [], {ASANA_ACCESS_TOKEN: dummy}],
  "brave-search": ["brave-search-mcp-server", [], {BRAVE_API_KEY: dummy}],
  "browser": ["playwright-mcp", ["--headless", "--caps=pdf"], {}],
  "chrome-devtools": ["chrome-devtools-mcp", ["--headless"], {}],
  "circleci": ["mcp-server-circleci", [], {CIRCLECI_TOKEN: dummy}],
  "firecrawl": ["firecrawl-mcp", [], {FIRECRAWL_API_KEY: dummy}],
  "github": ["mcp-server-github", [], {GITHUB_PERSONAL_ACCESS_TOKEN: dummy}],
  "gitlab": ["mcp-server-gitlab", [], {GITLAB_PERSONAL_ACCESS_TOKEN: dummy}],
  "google-calendar": ["google-calendar-mcp", [], {GOOGLE_OAUTH_CREDENTIALS: oauth}],
  "google-maps": ["mcp-server-google-maps", [], {GOOGLE_MAPS_API_KEY: dummy}],
  "mermaid": ["mcp-mermaid", [], {}],
  "mongodb": ["mongodb-mcp-server", [], {}],
  "notion": ["notion-mcp-server", [], {NOTION_TOKEN: dummy}],
  "slack": ["mcp-server-slack", [], {SLACK_BOT_TOKEN: dummy, SLACK_TEAM_ID: "T000"}],
  "tavily": ["tavily-mcp", [], {TAVILY_API_KEY: dummy}],
  "argocd": ["argocd-mcp", ["stdio"], {ARGOCD_BASE_URL: "https://argocd.invalid", ARGOCD_API_TOKEN: dummy}],
  "cloud-run": ["cloud-run-mcp", [], {}],
  "drawio": ["drawio-mcp", [], {}],
  "figma": ["figma-developer-mcp", ["--stdio"], {FIGMA_API_KEY: dummy}],
  "launchdarkly": ["../@launchdarkly/mcp-server/bin/mcp-server.js", ["start", "--api-key", dummy], {}],
  "mapbox": ["mcp-server", [], {MAPBOX_ACCESS_TOKEN: dummy}],
  "mobile": ["mcp-server-mobile", [], {}],
  "perplexity": ["perplexity-mcp", [], {PERPLEXITY_API_KEY: dummy}],
  "pinecone": ["pinecone-mcp", [], {PINECONE_API_KEY: dummy}],
  "postman": ["postman-mcp-server", [], {POSTMAN_API_KEY: dummy}],
  "shortcut": ["mcp-server-shortcut", [], {SHORTCUT_API_TOKEN: dummy}],
  "backlog": ["backlog-mcp-server", [], {BACKLOG_DOMAIN: "example.backlog.com", BACKLOG_API_KEY: dummy}],
  "elasticsearch": ["mcp-server-elasticsearch", [], {ES_URL: "http://127.0.0.1:9", ES_API_KEY: dummy}],
  "eslint": ["../@eslint/mcp/src/mcp-cli.js", [], {}],
};
const only = process.argv.slice(3);
let failed = 0;
for (const [name, [bin, args, env]] of Object.entries(S)) {
  if (only.length && !only.includes(name)) continue;
  const t = new StdioClientTransport({command: B + bin, args, cwd: home, env: {...process.env, ...env, HOME: home}, stderr: "pipe"});
  const c = new Client({name: "mcpagent-capture", version: "0.1"});
  let err = "";
  try {
    const p = c.connect(t);
    t.stderr?.on("data", d => { err += d; });
    await Promise.race([p, new Promise((_, r) => setTimeout(() => r(new Error("no answer in 30 s")), 30000))]);
    const tools = [];
    let cursor;
    do { const r = await c.listTools(cursor ? {cursor} : {}); tools.push(...r.tools); cursor = r.nextCursor; } while (cursor);
    fs.writeFileSync(path.join(here, name + ".jsonl"), tools.map(x => JSON.stringify({name: x.name, description: (x.description || "").replaceAll(home, "<working directory>"), input_schema: x.inputSchema})).join("\n") + "\n");
    console.log(name, tools.length, "tools");
  } catch (e) {
    failed++;
    console.error(`${name}: ${e.message}\n${err.slice(0, 400)}`);
  }
  try { await c.close(); } catch {}
}
process.exit(failed ? 1 : 0);
