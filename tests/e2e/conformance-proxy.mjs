// conformance-proxy.mjs — a tiny local HTTP proxy in front of `zcor serve`
// for the MCP conformance suite.
//
// Why: @modelcontextprotocol/conformance 0.1.13 (`conformance server --url`)
// has no option to send custom headers, and zcor's /mcp refuses any request
// without `Authorization: Bearer <token>` (docs/API.md). The proxy adds that
// header and forwards everything else unchanged, so the suite talks to the
// real server. It does not weaken zcor's checks:
//   - Host and Origin are forwarded as sent; only a loopback name with the
//     proxy's own port (127.0.0.1 / localhost / [::1] : PROXY_PORT) has the
//     port rewritten to zcor's, so that zcor sees the address it would have
//     seen without the proxy. evil.example.com stays evil.example.com, and
//     zcor itself answers 403 (the dns-rebinding-protection scenario).
//   - A client's own Authorization header is replaced by the token.
//
// Use as a module: startProxy({ target: 'http://127.0.0.1:PORT', token })
// → { url, port, close() }; or from the command line:
//   node conformance-proxy.mjs http://127.0.0.1:7700 TOKEN [LISTEN_PORT]
import { createServer, request as httpRequest } from 'node:http';
import { pathToFileURL } from 'node:url';

const LOOPBACK = ['127.0.0.1', 'localhost', '[::1]'];

function rewriteHost(value, proxyPort, targetPort) {
  if (typeof value !== 'string') return value;
  for (const name of LOOPBACK) {
    if (value.toLowerCase() === `${name}:${proxyPort}`) return `${name}:${targetPort}`;
    if (value.toLowerCase() === `http://${name}:${proxyPort}`) return `http://${name}:${targetPort}`;
  }
  return value;
}

export async function startProxy({ target, token, port = 0 }) {
  const t = new URL(target);
  const targetPort = Number(t.port);
  let proxyPort = 0;
  const server = createServer((req, res) => {
    const headers = { ...req.headers };
    headers.host = rewriteHost(headers.host, proxyPort, targetPort);
    if (headers.origin) headers.origin = rewriteHost(headers.origin, proxyPort, targetPort);
    headers.authorization = `Bearer ${token}`;
    const up = httpRequest({
      host: t.hostname, port: targetPort, method: req.method, path: req.url, headers,
    }, (upRes) => {
      res.writeHead(upRes.statusCode, upRes.headers);
      upRes.pipe(res);
    });
    up.on('error', (e) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'proxy_error', message: e.message } }));
    });
    req.pipe(up);
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  proxyPort = server.address().port;
  return {
    port: proxyPort,
    url: `http://127.0.0.1:${proxyPort}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [target, token, port] = process.argv.slice(2);
  if (!target || !token) {
    console.error('usage: node conformance-proxy.mjs http://127.0.0.1:PORT TOKEN [LISTEN_PORT]');
    process.exit(2);
  }
  const p = await startProxy({ target, token, port: Number(port ?? 0) });
  console.log(`conformance-proxy: ${p.url} -> ${target}`);
}
