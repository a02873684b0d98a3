// GET a Prometheus /metrics page over HTTPS with a KubeConfig's credentials: the API server's (verified against the
// kubeconfig's CA) and upstream LeaderWorkerSet's (its own self-signed certificate, not verified).
import { get as httpsGet, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export async function scrapeMetrics(
  kc: KubeConfig,
  url: string,
  { what, verify }: { what: string; verify: boolean },
): Promise<string> {
  const options: RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const req = httpsGet(
      url,
      { ca: options.ca, headers: options.headers, rejectUnauthorized: verify, timeout: 5000 },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(text)
            : reject(new Error(`${what}'s /metrics: HTTP ${res.statusCode}: ${text.slice(0, 200)}`)),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${what}'s /metrics: no answer in 5 s`)));
    req.on('error', reject);
  });
}
