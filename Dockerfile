# syntax=docker/dockerfile:1
# One image, five services: `node dist/<service>/main.js` picks which (see docker-compose.yml).

FROM node:24-bookworm-slim AS build
WORKDIR /app
# Node 24, the current LTS line. better-sqlite3 12.x ships prebuilt binaries for Node 24 (ABI 137)
# on glibc x64 and arm64; the compilers are there for when no prebuilt binary matches.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.base.json tsconfig.json ./
COPY tools/build.mjs tools/build.mjs
COPY apps apps
COPY libs libs
RUN node tools/build.mjs && npm prune --omit=dev

FROM node:24-bookworm-slim AS runtime
# MALLOC_MMAP_THRESHOLD_: glibc gives large request bodies memory of their own and returns it
# when they are freed, so resident memory comes back after a flood (docs/operations.md, "Memory").
ENV NODE_ENV=production WHC_DATA_DIR=/data WHC_HOST=0.0.0.0 MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json ./
# The data directory holds keys: private to the service's user (a new named volume copies this mode).
RUN mkdir -p /data && chown node:node /data && chmod 0700 /data
USER node
VOLUME ["/data"]
# The service to run is the command's argument, e.g. `dist/gateway/main.js`. Every process
# starts V8's old generation with room for 128 MiB before its first major collection; the
# all-in-one process, the default, also runs with V8's young generation up to 64 MiB a
# semi-space: fewer scavenges under load; the distributed services without (docs/operations.md,
# "Memory").
ENTRYPOINT ["node", "--enable-source-maps", "--initial-old-space-size=128"]
CMD ["--max-semi-space-size=64", "dist/all-in-one/main.js"]
