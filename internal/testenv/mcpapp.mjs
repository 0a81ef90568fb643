// A small MCP Apps server for the tests, built on npm
// @modelcontextprotocol/ext-apps (2.0.4) and the TypeScript SDK v2: one
// tool with a UI (ui://weather/forecast.html, HTML with CSP _meta), one
// app-only tool the UI calls (visibility ["app"]), one tool with an
// outputSchema, and a tool that answers which MCP Apps capability the
// client declared (the extension negotiated by the gateway).
//
//   node mcpapp.mjs stdio        serve on stdin/stdout
//   node mcpapp.mjs http         serve Streamable HTTP on 127.0.0.1 (a free
//                                port); prints {"url": ...} on stdout
//
// TOOLRAG_NPM_MODULES is the node_modules folder holding the packages.
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const mods = process.env.TOOLRAG_NPM_MODULES;
const load = (p) => import(pathToFileURL(path.join(mods, p)).href);
const { McpServer } = await load('@modelcontextprotocol/server/dist/index.mjs');
const apps = await load('@modelcontextprotocol/ext-apps/dist/src/server/index.js');
const { z } = await load('zod/index.js');

const VIEW = 'ui://weather/forecast.html';

// The app's HTML: it renders the forecast the tool passed it, and marks
// itself rendered so a browser test can see it ran.
const html = `<!doctype html>
<html><head><meta charset="utf-8"><title>Forecast</title>
<style>body{font-family:sans-serif} .temp{font-size:2em}</style></head>
<body><h1 id="title">Weather forecast</h1>
<div id="forecast" class="temp">loading</div>
<script>
  const params = new URLSearchParams(location.hash.slice(1));
  document.getElementById('forecast').textContent = (params.get('city') || 'Oslo') + ': 21 °C, sunny';
  document.body.dataset.rendered = 'yes';
</script></body></html>`;

function build() {
  const server = new McpServer({ name: 'weather-app', version: '1.0.0' });

  apps.registerAppResource(server, 'Forecast view', VIEW, {
    description: 'The forecast as an interactive view',
    _meta: { ui: { csp: { connectDomains: ['https://api.weather.example'], resourceDomains: ['https://cdn.weather.example'] }, prefersBorder: true } },
  }, async () => ({
    contents: [{
      uri: VIEW, mimeType: apps.RESOURCE_MIME_TYPE, text: html,
      _meta: { ui: { csp: { connectDomains: ['https://api.weather.example'], resourceDomains: ['https://cdn.weather.example'] }, prefersBorder: true } },
    }],
  }));

  apps.registerAppTool(server, 'show_forecast', {
    title: 'Show the weather forecast',
    description: 'Show the weather forecast for a city in an interactive view',
    inputSchema: { city: z.string().describe('the city') },
    outputSchema: { city: z.string(), celsius: z.number() },
    _meta: { ui: { resourceUri: VIEW } },
  }, async ({ city }) => ({
    content: [{ type: 'text', text: `${city}: 21 °C, sunny` }],
    structuredContent: { city, celsius: 21 },
    _meta: { ui: { resourceUri: VIEW } },
  }));

  apps.registerAppTool(server, 'refresh_forecast', {
    description: 'Refresh the forecast shown in the view (called by the view only)',
    inputSchema: { city: z.string() },
    _meta: { ui: { resourceUri: VIEW, visibility: ['app'] } },
  }, async ({ city }) => ({ content: [{ type: 'text', text: `refreshed ${city}` }] }));

  server.registerTool('ui_support', {
    description: 'Report the MCP Apps support the client declared',
    inputSchema: {},
  }, async () => {
    const caps = server.server.getClientCapabilities();
    return { content: [{ type: 'text', text: JSON.stringify(apps.getUiCapability(caps) ?? null) }] };
  });
  return server;
}

if (process.argv[2] === 'http') {
  const sdk = await load('@modelcontextprotocol/server/dist/index.mjs');
  const handler = sdk.createMcpHandler(() => build());
  const srv = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method, headers: req.headers,
      body: ['GET', 'HEAD'].includes(req.method) ? undefined : body,
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) {
      for await (const c of response.body) res.write(c);
    }
    res.end();
  });
  srv.listen(0, '127.0.0.1', () => {
    process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${srv.address().port}/mcp` }) + '\n');
  });
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
} else {
  const { StdioServerTransport } = await load('@modelcontextprotocol/server/dist/stdio.mjs');
  await build().connect(new StdioServerTransport());
}
