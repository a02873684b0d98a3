// npm run codec-server: the codec server for the Web UI, with the keys of LWS_PAYLOAD_KEYS_DIR. LWS_CODEC_PORT
// (default 8888), LWS_CODEC_HOST (default 127.0.0.1), LWS_CODEC_CORS_ORIGINS (the Web UI's origins, comma-separated).
import { ConfigError } from '../config/temporal.js';
import { payloadCodecsFromEnv } from '../config/payload-codec.js';
import { checkLogSettings, createLogger } from '../log.js';
import { serveCodec } from './codec-server.js';

const log = createLogger('codec-server');
try {
  checkLogSettings();
  const codecs = payloadCodecsFromEnv();
  if (codecs.length === 0) throw new ConfigError('LWS_PAYLOAD_KEYS_DIR holds no key: nothing to decode with');
  const port = Number(process.env.LWS_CODEC_PORT ?? 8888);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`LWS_CODEC_PORT=${process.env.LWS_CODEC_PORT}: expected a port from 0 to 65535`);
  }
  const server = await serveCodec({
    codecs,
    port,
    host: process.env.LWS_CODEC_HOST || '127.0.0.1',
    allowOrigins: (process.env.LWS_CODEC_CORS_ORIGINS ?? '').split(',').filter(Boolean),
    log,
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void server.close());
} catch (err) {
  log.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
