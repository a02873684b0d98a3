// npm run build:image [-- --tag <tag>] [--check | --no-check]: the product's container image from the Dockerfile,
// built here without a Docker daemon or a registry (tools/images/product-image.ts), as an OCI archive in the cache
// that `ctr -n k8s.io images import` takes. A fresh build is checked (unpacked, node run in it as uid 1000) unless
// --no-check; --check checks a cached one too.
import { parseArgs } from 'node:util';
import { createLogger, formatDuration } from '../src/log.js';
import { buildProductImage, checkProductImage } from '../tools/images/product-image.js';
import { StepError } from '../tools/stack/run.js';

const log = createLogger('build-image');
const { values } = parseArgs({
  options: { tag: { type: 'string' }, check: { type: 'boolean' }, 'no-check': { type: 'boolean' } },
});
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const started = Date.now();
try {
  const image = await buildProductImage({ log, tag: values.tag });
  const took = Date.now() - started;
  const lines = [
    ['ref', image.ref],
    ['archive', image.archive],
    ['size', `${mb(image.sizeBytes)} (the archive: compressed layers)`],
    ['time', `${formatDuration(took)} (${image.built ? 'built' : 'cached'})`],
  ];
  if (values.check || (image.built && !values['no-check'])) {
    const checkStarted = Date.now();
    const check = await checkProductImage(image.archive, { log });
    for (const c of check.checks) log.info(`checked: ${c}`);
    lines.push(
      ['unpacked', mb(check.unpackedBytes)],
      ['check', `passed in ${formatDuration(Date.now() - checkStarted)}`],
    );
  }
  for (const [k, v] of lines) process.stdout.write(`${k!.padEnd(9)}${v}\n`);
} catch (err) {
  if (err instanceof StepError) {
    log.error(err.message);
  } else {
    log.error('build:image failed', { error: err instanceof Error ? err.stack : String(err) });
  }
  process.exit(1);
}
