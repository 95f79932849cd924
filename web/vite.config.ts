import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { inlineDocumentsPlugin } from './inline-documents.ts';

// Built into dist/web and served by Nest under /app (src/console). `npm run web:dev` serves it
// with Vite and sends /graphql (HTTP and WebSocket) to a service on port 3000.
export default defineConfig({
  root: 'web',
  base: '/app/',
  // Each page's chunk carries its own GraphQL documents only (see inline-documents.ts).
  plugins: [inlineDocumentsPlugin(fileURLToPath(new URL('./src/gql/graphql.ts', import.meta.url)))],
  // No source maps in the build the service serves (it is the production one): they would hand
  // anyone the console's sources. WEB_SOURCEMAP=true builds them for a local debugging session.
  build: {
    outDir: '../dist/web',
    emptyOutDir: true,
    sourcemap: process.env.WEB_SOURCEMAP === 'true',
  },
  server: {
    port: 5173,
    proxy: { '/graphql': { target: 'http://localhost:3000', ws: true } },
  },
});
