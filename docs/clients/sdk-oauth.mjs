// TypeScript SDK client with OAuth client credentials: no token in hand;
// the client reads the gateway's 401, discovers the authorization server
// from /.well-known/oauth-protected-resource, gets a token for this
// resource (RFC 8707) and retries.
// MCP_URL=... ISSUER=... CLIENT_ID=... CLIENT_SECRET=... node sdk-oauth.mjs
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';

const authProvider = new ClientCredentialsProvider({
  clientId: process.env.CLIENT_ID,
  clientSecret: process.env.CLIENT_SECRET,
  scope: 'mcp.tools', // a scope the gateway's oauth grants match
  expectedIssuer: process.env.ISSUER, // credentials go to this authorization server only
});
const transport = new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), { authProvider });
const client = new Client({ name: 'my-agent', version: '1.0.0' });
await client.connect(transport);

const { tools } = await client.listTools();
console.log('tools:', tools.map((t) => t.name).join(' '));
const found = await client.callTool({ name: 'find_tools', arguments: { query: 'reverse a string', top_k: 3 } });
const best = JSON.parse(found.content[0].text).results[0];
const ran = await client.callTool({ name: 'run_tool', arguments: { call_name: best.call_name, arguments: { text: 'hello' } } });
console.log('result:', ran.content[0].text);
await client.close();
