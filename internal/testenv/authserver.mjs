// A real OAuth 2 authorization server for the tests: oauth2-mock-server
// (npm) on 127.0.0.1, signing RS256 JWTs with a JWKS, plus a small control
// server the Go tests drive (key rotation, tokens with chosen claims, the
// next introspection answer). Prints {"issuer": ..., "control": ...} on
// stdout when both listen. Started by testenv.StartAuthServer.
import { serveControl } from './control.mjs';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const mod = await import(pathToFileURL(path.join(process.env.TOOLRAG_NPM_MODULES, 'oauth2-mock-server', 'dist', 'index.mjs')).href);
const { OAuth2Server, Events } = mod;

const server = new OAuth2Server();
await server.issuer.keys.generate('RS256', { kid: 'k1' });
// Token requests: the client credentials grant, with the RFC 8707 resource
// as the audience, the client as the subject, and test-only x_* fields
// that bend one claim (expired, wrong audience, wrong issuer...).
server.service.on(Events.BeforeTokenSigning, (token, req) => {
  const b = req.body || {};
  const p = token.payload;
  let client = b.client_id;
  const h = req.headers.authorization || '';
  if (h.startsWith('Basic ')) client = decodeURIComponent(Buffer.from(h.slice(6), 'base64').toString().split(':')[0]);
  if (client) { p.client_id = client; p.sub = client; }
  if (b.resource) p.aud = b.resource;
  if (b.x_sub) p.sub = b.x_sub;
  if (b.x_groups) p.groups = b.x_groups.split(',');
  const now = Math.floor(Date.now() / 1000);
  if (b.x_exp) p.exp = now + Number(b.x_exp);
  if (b.x_nbf) p.nbf = now + Number(b.x_nbf);
  if (b.x_iss) p.iss = b.x_iss;
  if (b.x_aud) p.aud = b.x_aud;
  if (b.x_no_aud) delete p.aud;
  // Authorization code and refresh grants act for the user who approved
  // (the x_user query of /authorize), with the TTL set by /ttl.
  if (b.grant_type === 'authorization_code' && codeUser.has(b.code)) p.sub = codeUser.get(b.code);
  if (b.grant_type === 'refresh_token' && refreshUser.has(b.refresh_token)) p.sub = refreshUser.get(b.refresh_token);
  if (b.grant_type === 'authorization_code' || b.grant_type === 'refresh_token') {
    p.exp = now + nextTtl;
    req.__sub = p.sub;
  }
  grants[b.grant_type] = (grants[b.grant_type] || 0) + 1;
});
const codeUser = new Map();
const refreshUser = new Map();
const grants = {};
let nextTtl = 3600;
let revocations = 0;
server.service.on(Events.BeforeAuthorizeRedirect, (redirect, req) => {
  const user = req.query && req.query.x_user;
  const code = redirect.url.searchParams.get('code');
  if (user && code) codeUser.set(code, user);
});
server.service.on(Events.BeforeResponse, (resp, req) => {
  const b = req.body || {};
  if (b.grant_type === 'authorization_code' || b.grant_type === 'refresh_token') {
    resp.body.expires_in = nextTtl;
    if (resp.body.refresh_token && req.__sub) refreshUser.set(resp.body.refresh_token, req.__sub);
  }
});
server.service.on(Events.BeforeRevoke, () => { revocations++; });
let introspections = 0;
server.service.on(Events.BeforeIntrospect, () => { introspections++; });
await server.start(0, '127.0.0.1');

serveControl({
  rotate: async (body) => {
    const k = await server.issuer.keys.generate(body.alg || 'RS256', { kid: body.kid });
    return { kid: k.kid };
  },
  sign: async (body) => ({ token: await server.issuer.buildToken({ kid: body.kid, expiresIn: body.expiresIn, scopesOrTransform: (_h, p) => Object.assign(p, body.claims || {}) }) }),
  'introspect-next': (body) => { server.service.once(Events.BeforeIntrospect, (r) => { r.body = body; }); },
  stats: () => ({ introspections, grants, revocations }),
  ttl: (body) => { nextTtl = Number(body.seconds); },
}, { issuer: server.issuer.url });
