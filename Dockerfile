# Keepsake: build with the dev toolchain, run the compiled service on Node 20 slim as a non-root
# user. The command is the one the process and multi-instance tests run: node dist/src/main.js.

FROM node:20-bookworm-slim AS build
# onnxruntime-node's install script would fetch CUDA libraries from outside npm: the CPU ones
# inside the package are all the service uses (npm 11 reads package.json's allowScripts too);
# node-llama-cpp's would look for a llama.cpp build to download: its npm packages carry the CPU ones.
ENV ONNXRUNTIME_NODE_INSTALL=skip NODE_LLAMA_CPP_SKIP_DOWNLOAD=true
WORKDIR /app
COPY package.json package-lock.json ./
# Not `npm ci`: the registry serves only the Linux builds of Jest's optional native resolver, so
# the lock file cannot list the others (see .ci/run). `npm install` keeps the locked versions.
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ormconfig.ts ./
COPY src ./src
COPY migrations ./migrations
# The family console: its typed operations come from schema.gql, Vite builds it into dist/web.
COPY schema.gql ./
COPY web ./web
RUN npm run build

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production PORT=3000 DATA_DIR=/data MODELS_DIR=/app/models ONNXRUNTIME_NODE_INSTALL=skip NODE_LLAMA_CPP_SKIP_DOWNLOAD=true
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The local sentence encoder, fetched once into the image from the Hugging Face hub and checked
# against its pinned SHA-256. Built where the hub is out of reach, the image embeds with
# USE-lite (said in the log and /health/ready); mount the files and set EMBEDDINGS_MODEL_DIR.
RUN node dist/src/llm/cli/models-fetch.js --if-missing
# The embedded database (without DATABASE_URL) and its generated secret live in DATA_DIR.
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/src/main.js"]
