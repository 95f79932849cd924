import { defineConfig } from 'vite';

// Built into dist/web and served by Nest under /app (src/console). `npm run web:dev` serves it
// with Vite and sends /graphql (HTTP and WebSocket) to a service on port 3000.
export default defineConfig({
  root: 'web',
  base: '/app/',
  build: { outDir: '../dist/web', emptyOutDir: true, sourcemap: true },
  server: {
    port: 5173,
    proxy: { '/graphql': { target: 'http://localhost:3000', ws: true } },
  },
});
