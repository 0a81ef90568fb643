// A real OpenID Connect / OAuth 2 authorization server for the tests:
// npm oidc-provider on 127.0.0.1 with Dynamic Client Registration
// (RFC 7591), authorization code + PKCE, refresh tokens, resource
// indicators (RFC 8707: JWT access tokens whose audience is the resource)
// and a token exchange grant (RFC 8693). The login and consent interaction
// approves at once as the user named by the x_user authorization parameter.
// A small control server lets the Go tests sign inbound tokens, set the
// access token lifetime, end a user's grants and read counts. Prints
// {"issuer": ..., "control": ...} on stdout when both listen. Started by
// testenv.StartOIDCProvider.
import http from 'node:http';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { serveControl } from './control.mjs';

const mods = process.env.TOOLRAG_NPM_MODULES;
const load = (name, file) => import(pathToFileURL(path.join(mods, name, file)).href);
const { default: Provider, errors } = await load('oidc-provider', 'lib/index.js');
const jose = await load('jose', 'dist/webapi/index.js');

const { privateKey, publicKey } = await jose.generateKeyPair('RS256', { extractable: true });
const jwk = { ...(await jose.exportJWK(privateKey)), kid: 'k1', alg: 'RS256', use: 'sig' };

const port = await new Promise((ok) => { const s = http.createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => ok(p)); }); });
const issuer = `http://127.0.0.1:${port}`;
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';

let nextTtl = 3600;
const grants = {}; // token requests per grant_type
const accountGrants = new Map(); // account → grant ids
let registrations = 0;

const provider = new Provider(issuer, {
  jwks: { keys: [jwk] },
  clients: [{
    client_id: 'exchanger', client_secret: 'exchanger-secret',
    grant_types: [EXCHANGE], response_types: [], redirect_uris: [],
  }],
  extraParams: ['x_user'],
  scopes: ['openid', 'offline_access', 'mcp'],
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx, client, oneOf) => (oneOf ? oneOf[0] : undefined),
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => ({
        scope: 'mcp', audience: resource, accessTokenTTL: nextTtl,
        accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
  pkce: { required: () => true },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  findAccount: async (ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  ttl: { RefreshToken: 24 * 3600, Grant: 24 * 3600, Session: 24 * 3600, Interaction: 600, AuthorizationCode: 60 },
});

// RFC 8693: the subject token must be a token this server signed that has
// not expired; the new access token names the same subject, the requested
// audience, and the exchanging client as the actor.
provider.registerGrantType(EXCHANGE, async (ctx) => {
  const p = ctx.oidc.params;
  grants[EXCHANGE] = (grants[EXCHANGE] || 0) + 1;
  if (p.subject_token_type !== 'urn:ietf:params:oauth:token-type:access_token') {
    throw new errors.InvalidRequest('unsupported subject_token_type');
  }
  let claims;
  try {
    ({ payload: claims } = await jose.jwtVerify(p.subject_token, publicKey, { issuer }));
  } catch (e) {
    throw new errors.InvalidGrant(`subject_token: ${e.message}`);
  }
  const audience = p.audience || p.resource;
  if (!audience) throw new errors.InvalidTarget('audience or resource required');
  const token = await new jose.SignJWT({ scope: p.scope || 'mcp', client_id: ctx.oidc.client.clientId, act: { sub: ctx.oidc.client.clientId } })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'at+jwt' })
    .setIssuer(issuer).setSubject(claims.sub).setAudience(audience)
    .setIssuedAt().setExpirationTime(`${nextTtl}s`).setJti(crypto.randomUUID())
    .sign(privateKey);
  ctx.body = { access_token: token, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', token_type: 'Bearer', expires_in: nextTtl };
}, ['subject_token', 'subject_token_type', 'actor_token', 'actor_token_type', 'audience', 'resource', 'scope', 'requested_token_type'], ['resource', 'audience']);

provider.use(async (ctx, next) => {
  await next();
  if (ctx.path === '/reg' && ctx.method === 'POST' && ctx.status === 201) registrations++;
  if (ctx.path === '/token' && ctx.method === 'POST' && ctx.oidc && ctx.oidc.params) {
    const g = ctx.oidc.params.grant_type;
    if (g !== EXCHANGE) grants[g] = (grants[g] || 0) + 1;
  }
});

// The interaction: log in as x_user and grant what was asked, at once.
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { params, prompt } = details;
  const accountId = details.session?.accountId || params.x_user || 'user';
  const result = {};
  if (prompt.name === 'login') result.login = { accountId };
  let grant = details.grantId ? await provider.Grant.find(details.grantId) : new provider.Grant({ accountId, clientId: params.client_id });
  if (params.scope) grant.addOIDCScope(params.scope);
  const resources = [].concat(params.resource || []);
  for (const r of resources) grant.addResourceScope(r, 'mcp');
  const grantId = await grant.save();
  if (!accountGrants.has(accountId)) accountGrants.set(accountId, new Set());
  accountGrants.get(accountId).add(grantId);
  result.consent = { grantId };
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
}

const callback = provider.callback();
const server = http.createServer((req, res) => {
  if (req.url.startsWith('/interaction/')) {
    interaction(req, res).catch((e) => { res.writeHead(500); res.end(String(e && e.stack || e)); });
    return;
  }
  callback(req, res);
});
await new Promise((ok) => server.listen(port, '127.0.0.1', ok));

serveControl({
  // An inbound token for the gateway: claims chosen by the test.
  sign: async (body) => ({
    token: await new jose.SignJWT(body.claims || {})
      .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'at+jwt' })
      .setIssuer(issuer).setIssuedAt().setExpirationTime(`${body.expiresIn || 3600}s`).setJti(crypto.randomUUID())
      .sign(privateKey),
  }),
  ttl: (body) => { nextTtl = Number(body.seconds); },
  // The user's grants end at the server (as when they revoke the
  // application there): their refresh tokens stop working.
  'end-grants': async (body) => {
    let n = 0;
    for (const id of accountGrants.get(body.account) || []) {
      const g = await provider.Grant.find(id);
      if (g) { await g.destroy(); n++; }
    }
    accountGrants.delete(body.account);
    return { ended: n };
  },
  stats: () => ({ grants, registrations }),
}, { issuer });
