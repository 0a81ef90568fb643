// TypeScript SDK client with an API key (npm i @modelcontextprotocol/sdk).
// MCP_URL=http://127.0.0.1:8765/mcp TOOLRAG_KEY=dev-key-full-access node sdk-api-key.mjs
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const transport = new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), {
  requestInit: { headers: { Authorization: `Bearer ${process.env.TOOLRAG_KEY}` } },
});
const client = new Client({ name: 'my-agent', version: '1.0.0' });
await client.connect(transport);

// A non-admin key sees only the meta-tools.
const { tools } = await client.listTools();
console.log('tools:', tools.map((t) => t.name).join(' '));

// Step 1: find tools for the task (semantic search over the catalog the key may use).
const found = await client.callTool({ name: 'find_tools', arguments: { query: 'reverse a string', top_k: 3 } });
const best = JSON.parse(found.content[0].text).results[0];
console.log('found:', best.call_name);

// Step 2: run the one you picked by its call_name, with arguments matching its input_schema.
const ran = await client.callTool({ name: 'run_tool', arguments: { call_name: best.call_name, arguments: { text: 'hello' } } });
console.log('result:', ran.content[0].text);
await client.close();
