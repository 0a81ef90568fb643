// The control server of the test authorization servers (authserver.mjs,
// oidcprovider.mjs): on 127.0.0.1, each POST /<name> runs routes[name]
// with the JSON body and answers its result as JSON. When it listens it
// prints hello plus {"control": its URL} on stdout (what testenv reads),
// and the process exits when the test closes stdin.
import http from 'node:http';

const read = (req) => new Promise((ok) => { let s = ''; req.on('data', (c) => (s += c)); req.on('end', () => ok(s ? JSON.parse(s) : {})); });

export function serveControl(routes, hello) {
  const control = http.createServer(async (req, res) => {
    try {
      const body = await read(req);
      const route = routes[new URL(req.url, 'http://x').pathname.slice(1)];
      if (!route) {
        res.writeHead(404); res.end(); return;
      }
      const out = (await route(body)) || {};
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(out));
    } catch (e) {
      res.writeHead(500); res.end(String(e && e.stack || e));
    }
  });
  control.listen(0, '127.0.0.1', () => {
    console.log(JSON.stringify({ ...hello, control: `http://127.0.0.1:${control.address().port}` }));
  });
  process.stdin.on('end', () => process.exit(0)); // the test's end closes stdin
  process.stdin.resume();
}
