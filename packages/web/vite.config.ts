import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { precompress } from './build/precompress';

/** Where `npm run dev` forwards the server's own paths; the Gatehouse server listens here by default. */
const GATEHOUSE_SERVER = 'http://localhost:4180';

const toGatehouse = { target: GATEHOUSE_SERVER, changeOrigin: false };

export default defineConfig({
  plugins: [react(), precompress()],
  // The contract's sources, bundled like the front end's own (no build of the package needed first).
  resolve: { alias: { '@gatehouse/contract': fileURLToPath(new URL('../contract/src/index.ts', import.meta.url)) } },
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
  },
});
