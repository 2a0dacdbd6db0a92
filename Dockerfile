# syntax=docker/dockerfile:1
# Switchyard gateway image. Build: docker build -t switchyard .
# Run:   docker run -p 8080:8080 -e UPSTREAM_URL=http://vllm:8000/v1 --read-only -v switchyard-data:/data switchyard
# (See deploy/README.md; the build steps are the ones CI runs: npm ci, npm run build.)

# --- build: full install (dev deps for tsc, toolchain for better-sqlite3's addon) ---
FROM node:20-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY bin ./bin
COPY apps ./apps
COPY libs ./libs
COPY src ./src
COPY bench ./bench
# Then keep only what runs: the dependencies and the peer dependencies (Nest, the storage drivers and
# the broker clients, installed as devDependencies, so `npm prune --omit=dev` would drop them) with
# everything they need; the compiler, test runner and linters go.
RUN npm run build && node scripts/runtime-deps.mjs --prune

# --- runtime: the pruned node_modules and dist/ only, as an unprivileged user, on a read-only root ---
FROM node:20-bookworm-slim AS runtime
# The code interpreter's kernel backend (the default where these exist): the OS's Python with its
# data stack, in a bubblewrap sandbox, as ipykernels hosted by Jupyter Server. Without them it falls back to Pyodide.
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap python3 python3-numpy python3-pandas python3-matplotlib python3-scipy \
    python3-ipykernel python3-jupyter-client python3-jupyter-server \
    && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    SWITCHYARD_DATA_DIR=/data \
    LOG_FORMAT=json
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
COPY --from=build /app/scripts ./scripts
# Plain ES modules run in their own threads and processes, not compiled to dist/: the code
# interpreter's sandbox host, file search's ingestion thread and the batch input thread.
COPY --from=build /app/libs/tools/code-interpreter/sandbox/pyodide/host ./libs/tools/code-interpreter/sandbox/pyodide/host
COPY --from=build /app/libs/tools/file-search/ingestion/thread ./libs/tools/file-search/ingestion/thread
COPY --from=build /app/libs/passthrough/batches/thread ./libs/passthrough/batches/thread
# The console's page (HTML, CSS, one ES module) is served as written, not compiled.
COPY --from=build /app/libs/console/static ./libs/console/static
# The `node` user (uid 1000) exists in the official image. Everything the gateway writes (SQLite
# state, file-search store, code-interpreter containers) is under SWITCHYARD_DATA_DIR=/data, the
# one writable volume; /app stays root-owned and the root file system may be read-only.
RUN mkdir -p /data && chown node:node /data
# Plugins (SWITCHYARD_PLUGINS, --plugin) import `switchyard-gateway`: the name resolves to this
# gateway itself, so a plugin installed into /app/node_modules (a derived image's `npm install`)
# shares its decorators and tokens.
RUN ln -s /app /app/node_modules/switchyard-gateway
USER node
VOLUME ["/data"]
EXPOSE 8080
# Liveness: /health answers while the process serves (/ready also checks the state store).
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: node itself is PID 1 and gets SIGTERM, which starts the graceful drain (SHUTDOWN_GRACE_MS).
CMD ["node", "dist/apps/gateway/src/main.js"]
