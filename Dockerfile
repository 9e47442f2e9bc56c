# The Sluice image the Helm chart runs: `docker build -t sluice:0.1.0 .`
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev
COPY . .
ENV NODE_OPTIONS="--no-node-snapshot --conditions=sluice-source"
# RocksDB's threads each get a glibc malloc arena; two keep the RSS down (see scripts/start.sh).
ENV MALLOC_ARENA_MAX=2
EXPOSE 8288
ENTRYPOINT ["node", "bin/sluice.js"]
CMD ["start"]
