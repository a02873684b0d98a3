# syntax=docker/dockerfile:1
#
# lws-temporal: one image, two processes.
#   docker run IMAGE                              -> the Temporal worker  (node dist/worker/main.js, the default)
#   docker run IMAGE dist/trigger/main.js         -> the trigger          (node dist/trigger/main.js)
#   docker run IMAGE dist/admission/main.js       -> the pod admission webhook (node dist/admission/main.js)
#   docker run IMAGE dist/main.js                 -> both in one process  (what `npm start` runs; needs
#                                                    TEMPORAL_ADDRESS: the image has no embedded dev server)
#
# The build stage runs `npm run build`'s steps: tsc (docker/tsconfig.build.json: only what the processes run, plus
# src/workflows), the workflow bundle (dist/workflow-bundle.js) and one-file bundles of the entries, so the runtime
# stage needs neither tsx nor any other devDependency: it holds the production node_modules
# (`npm ci --omit=dev`), dist/ and package.json (for "type": "module"), and runs as the unprivileged uid 1000 (the
# `node` user of the base image).
#
# The Node.js version matches the development toolchain (package.json engines: >=20.19 <21 || >=22.12); change the
# tag, not the stages, to move to another patch release.
ARG NODE_IMAGE=node:20.20.2-bookworm-slim

# --- build: every dependency (tsc and tsx are devDependencies), compile src/ to dist/, bundle the workflows -------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY docker/tsconfig.build.json ./docker/
COPY src ./src
COPY scripts/build.ts ./scripts/
COPY tools/build ./tools/build
# What `npm run build` does (tools/build/build.ts): tsc, then the workflow bundle, built here once so that the worker
# loads it (LWS_WORKFLOW_BUNDLE) instead of running webpack at every start, then each process entry bundled into one
# file, which takes 40-60 MB less memory than Node loading the same code as hundreds of modules.
RUN npx tsx scripts/build.ts dist

# --- prod-deps: the production dependencies only ----------------------------------------------------------------
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
# The Temporal core bridge ships its native library for five platforms (~25 MB each): keep the one this image runs
# on, as the bridge itself names it, and fail the build if that one is missing.
RUN target="$(node -p "require('@temporalio/core-bridge/common').getPrebuiltTargetName()")" \
  && test -f "node_modules/@temporalio/core-bridge/releases/$target/index.node" \
  && find node_modules/@temporalio/core-bridge/releases -mindepth 1 -maxdepth 1 ! -name "$target" -exec rm -rf {} +

# --- runtime ------------------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# MALLOC_ARENA_MAX: glibc's default of one malloc arena per thread keeps freed memory of the Temporal core's threads
# (about 50-90 MB of the worker's peak in the benchmark). GLIBC_TUNABLES: a fixed mmap threshold, so that large freed
# buffers go back to the system at once (about 30 MB of the worker's peak). The heap limits are per process, in the
# Deployments.
ENV NODE_ENV=production \
    LWS_WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js \
    MALLOC_ARENA_MAX=2 \
    GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072
WORKDIR /app
# Owned by root and read-only to the process: the app never writes into its own tree (the workflows come bundled),
# so the container can run with a read-only root filesystem.
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# Numeric, so that Kubernetes can verify runAsNonRoot without a passwd lookup.
USER 1000:1000
# /healthz and /metrics (METRICS_PORT, default 9464).
EXPOSE 9464
# No --enable-source-maps: Node would load the bundles' maps at start, 30-50 MB per process. Function names survive
# the bundling, and dist/ keeps the maps for `docker run -e NODE_OPTIONS=--enable-source-maps` when debugging.
ENTRYPOINT ["node"]
CMD ["dist/worker/main.js"]
