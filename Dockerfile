# syntax=docker/dockerfile:1
# The Sluice image the Helm chart runs (deploy/helm/sluice): `docker build -t sluice:0.1.0 .`
# Node 24 runs the TypeScript sources as a checkout does (type stripping), with production
# dependencies only, as user 10001 (the chart's runAsUser). tests/deploy/dockerfile.test.ts checks it.
ARG NODE_IMAGE=node:24-bookworm-slim

# The dashboard (dist/dashboard/), bundled by esbuild from dashboard/: needs the dev dependencies.
FROM ${NODE_IMAGE} AS dashboard
WORKDIR /build
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY scripts/build-dashboard.ts scripts/
COPY dashboard/ dashboard/
RUN node scripts/build-dashboard.ts

# Production dependencies only. isolated-vm and rocksdb-native load prebuilt binaries they ship for every
# platform, so no install script or compiler is needed; those of other platforms are removed (140 MB).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && npm cache clean --force \
  && platform="$(node -p 'process.platform + "-" + process.arch')" \
  && find node_modules -type d -path '*/prebuilds/*' -prune ! -name "${platform}*" -exec rm -rf {} +

FROM ${NODE_IMAGE}
WORKDIR /app
# jemalloc keeps RSS flat under sustained load where glibc's malloc steps up (docs/operations.md,
# "Allocator"); linked at one path whatever the architecture, for LD_PRELOAD below.
RUN apt-get update -q \
  && apt-get install -y -q --no-install-recommends libjemalloc2 \
  && rm -rf /var/lib/apt/lists/* \
  && ln -s "$(find /usr/lib -name libjemalloc.so.2 | head -n 1)" /usr/local/lib/libjemalloc.so.2 \
  && groupadd --system --gid 10001 sluice \
  && useradd --system --uid 10001 --gid sluice --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin sluice \
  && mkdir /data /app/.compile-cache && chown 10001:10001 /data /app/.compile-cache
COPY --from=deps /app/node_modules/ node_modules/
COPY package.json ./
COPY bin/ bin/
COPY cli/ cli/
COPY config/ config/
COPY server/ server/
COPY one-pass/ one-pass/
COPY sdk/ sdk/
COPY core/ core/
COPY bus/ bus/
COPY ingest/ ingest/
COPY transformer/ transformer/
COPY dedup/ dedup/
COPY router/ router/
COPY runner/ runner/
COPY store/ store/
COPY control/ control/
COPY api/ api/
COPY client/ client/
COPY scripts/warm-compile-cache.ts scripts/
COPY --from=dashboard /build/dist/dashboard/ dist/dashboard/
# isolated-vm needs --no-node-snapshot; 16 MiB semi-spaces (see scripts/start.sh); sluice-source lets a functions file import `sluice/client` from these
# sources. jemalloc as scripts/start.sh runs it; `-e LD_PRELOAD=` goes back to glibc's malloc.
ENV NODE_OPTIONS="--no-node-snapshot --max-semi-space-size=16 --conditions=sluice-source" \
  LD_PRELOAD=/usr/local/lib/libjemalloc.so.2 \
  MALLOC_CONF=narenas:2,background_thread:true,dirty_decay_ms:5000,muzzy_decay_ms:0 \
  MALLOC_ARENA_MAX=2 \
  NODE_COMPILE_CACHE=/app/.compile-cache \
  SLUICE_HOST=0.0.0.0 \
  SLUICE_DATA_DIR=/data
USER 10001:10001
# Node's compile cache (bin/sluice.js), filled now, so that a container's first start neither strips
# types nor compiles Sluice from source: ~11 MiB less idle RSS (docs/operations.md, "Memory and
# backpressure"). Node keys it by user id, so it is filled as the user the image runs as. Reading
# it needs no write access: it works under the chart's read-only root filesystem.
RUN node scripts/warm-compile-cache.ts
# 8288: ingest, api and the embedded mode; 8289: the ops port of the other roles (/healthz, /readyz, /metrics).
EXPOSE 8288 8289
# Alive when either port answers /healthz (an image has no curl). Kubernetes ignores this and uses the chart's probes.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const ports = [process.env.SLUICE_PORT || 8288, process.env.SLUICE_OPS_PORT || 8289]; Promise.any(ports.map(async (port) => { const r = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(4000) }); if (!r.ok) throw new Error(String(r.status)) })).then(() => process.exit(0), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/sluice.js"]
CMD ["start"]
