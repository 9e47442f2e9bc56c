# The Sluice image the Helm chart runs: `docker build -t sluice:0.1.0 .`
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev
COPY . .
ENV NODE_OPTIONS="--no-node-snapshot --conditions=sluice-source"
EXPOSE 8288
ENTRYPOINT ["node", "bin/sluice.js"]
CMD ["start"]
