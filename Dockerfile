# syntax=docker/dockerfile:1
# Switchyard gateway image. Build: docker build -t switchyard .
# Run:   docker run -p 8080:8080 -e UPSTREAM_URL=http://vllm:8000/v1 switchyard
# (See deploy/README.md; the build steps are the ones CI runs: npm ci, npm run build.)

# --- build: full install (dev deps for tsc, toolchain for better-sqlite3's addon) ---
FROM node:20-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY bin ./bin
COPY apps ./apps
COPY libs ./libs
COPY src ./src
COPY bench ./bench
# No `npm prune --omit=dev`: Nest, the storage drivers and the broker clients are the package's
# (optional) peer dependencies, installed here as devDependencies, and the deployable gateway needs them.
RUN npm run build

# --- runtime: production dependencies and dist/ only, as an unprivileged user ---
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    SQLITE_PATH=/data/state.sqlite \
    LOG_FORMAT=json
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
COPY --from=build /app/scripts ./scripts
# The `node` user (uid 1000) exists in the official image; SQLite state goes to /data.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# Liveness, not readiness: /ready also probes the upstream, which is not this container's health.
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: node itself is PID 1 and gets SIGTERM, which starts the graceful drain (SHUTDOWN_GRACE_MS).
CMD ["node", "dist/apps/gateway/src/main.js"]
