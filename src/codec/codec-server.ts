// A codec server (the Temporal convention): POST /encode and /decode with `{payloads: [...]}` in protobuf JSON
// (bytes as base64), so the Web UI and `temporal` CLI show encrypted histories to whoever reaches it. It answers only
// the origins it is told (CORS), and binds to loopback unless told otherwise: put it behind your own authentication.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';
import type { Logger } from '../log.js';

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

const fromJson = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))]),
  ),
  data: new Uint8Array(Buffer.from(p.data ?? '', 'base64')),
});

const toJson = (p: Payload): JsonPayload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export interface CodecServer {
  url: string;
  close(): Promise<void>;
}

export async function serveCodec(opts: {
  codecs: PayloadCodec[];
  port: number;
  host?: string;
  /** Origins allowed to call it from a browser (the Web UI's), exactly as the browser sends them. */
  allowOrigins: string[];
  log: Logger;
}): Promise<CodecServer> {
  const cors = (req: IncomingMessage, res: ServerResponse) => {
    const origin = req.headers.origin;
    if (origin && opts.allowOrigins.includes(origin)) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
      res.setHeader('Access-Control-Allow-Headers', 'Content-Type, X-Namespace, Authorization');
      res.setHeader('Vary', 'Origin');
    }
  };
  const server: Server = createServer((req, res) => {
    cors(req, res);
    if (req.method === 'OPTIONS') return void res.writeHead(204).end();
    const path = req.url?.split('?')[0];
    if (req.method !== 'POST' || (path !== '/encode' && path !== '/decode')) {
      return void res.writeHead(404, { 'content-type': 'text/plain' }).end('POST /encode or /decode\n');
    }
    void (async () => {
      try {
        const { payloads } = JSON.parse(await body(req)) as { payloads?: JsonPayload[] };
        let out = (payloads ?? []).map(fromJson);
        if (path === '/encode') for (const c of opts.codecs) out = await c.encode(out);
        else for (const c of [...opts.codecs].reverse()) out = await c.decode(out);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ payloads: out.map(toJson) }));
      } catch (err) {
        opts.log.warn('codec request failed', { path, error: err instanceof Error ? err.message : String(err) });
        res
          .writeHead(400, { 'content-type': 'text/plain' })
          .end(`${err instanceof Error ? err.message : String(err)}\n`);
      }
    })();
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, resolve);
  });
  const url = `http://${host}:${(server.address() as AddressInfo).port}`;
  opts.log.info('codec server listening', { url, origins: opts.allowOrigins.join(' ') || 'none' });
  return { url, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
