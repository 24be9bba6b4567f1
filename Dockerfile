# One image for every relay role: `node dist/apps/relay/main.js --role <role>` (see docker-compose.yml).
FROM node:20-slim AS build
WORKDIR /app
# better-sqlite3 compiles from source when no prebuilt binary matches the platform.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# Scripts off: the package's own `prepare` script is the build, which needs the sources copied below.
# Then run the one install script the runtime needs (better-sqlite3's native binding).
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild better-sqlite3
COPY tsconfig.json ./
COPY apps ./apps
COPY libs ./libs
COPY bench ./bench
RUN npm run build && npm prune --omit=dev

FROM node:20-slim
ENV NODE_ENV=production \
    PORT=8080 \
    RELAY_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
# 8080: ingest and API; 9464: /metrics (METRICS_PORT, on loopback unless METRICS_HOST says otherwise).
EXPOSE 8080 9464
# main.ts handles SIGTERM (graceful close within RELAY_SHUTDOWN_TIMEOUT_MS); exec form keeps node the
# process that receives it.
CMD ["node", "dist/apps/relay/main.js"]
