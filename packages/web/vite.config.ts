import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'vite';
import { precompress } from './build/precompress';

/** Where `npm run dev` forwards the server's own paths; the Gatehouse server listens here by default. */
const GATEHOUSE_SERVER = 'http://localhost:4180';

const toGatehouse = { target: GATEHOUSE_SERVER, changeOrigin: false };

/** The development server answers /sign-in with the sign-in page's own entry, as the Gatehouse server does. */
function signInPage(): Plugin {
  return {
    name: 'gatehouse-sign-in-page',
    configureServer(server) {
      server.middlewares.use((request, _response, next) => {
        if (request.url === '/sign-in' || request.url?.startsWith('/sign-in?')) request.url = request.url.replace('/sign-in', '/sign-in.html');
        next();
      });
    },
  };
}

export default defineConfig({
  plugins: [react(), signInPage(), precompress()],
  // The contract's sources, bundled like the front end's own (no build of the package needed first).
  // `/paths` alone carries no schemas: the sign-in page's bundle imports only it.
  resolve: {
    alias: [
      { find: /^@gatehouse\/contract$/, replacement: fileURLToPath(new URL('../contract/src/index.ts', import.meta.url)) },
      { find: /^@gatehouse\/contract\/paths$/, replacement: fileURLToPath(new URL('../contract/src/paths.ts', import.meta.url)) },
    ],
  },
  server: {
    port: 5173,
    strictPort: true,
    proxy: {
      '/api': toGatehouse,
      '/.gatehouse': toGatehouse,
      '/healthz': toGatehouse,
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Every asset, the favicon included, becomes a hashed file under /assets/: no data: URIs for the CSP
    // to allow, and the server needs to serve only index.html and /assets/*.
    assetsInlineLimit: 0,
    // No source maps in the build: the server would publish them, and with them the whole source.
    sourcemap: false,
    // Two entries: the app (index.html) and the sign-in page (sign-in.html), which needs none of the
    // app's libraries and is most people's first page.
    rollupOptions: {
      input: {
        index: fileURLToPath(new URL('index.html', import.meta.url)),
        signIn: fileURLToPath(new URL('sign-in.html', import.meta.url)),
      },
    },
  },
});
