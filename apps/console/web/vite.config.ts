import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** Built by `npm run build` (so by `npm ci`) into dist/console, served by the api role at /console. */
export default defineConfig({
  root: here('.'),
  base: '/console/',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: here('../../../dist/console'),
    emptyOutDir: true,
    // Chromium of Debian stable and every evergreen browser: no legacy bundle.
    target: 'es2022',
    reportCompressedSize: false,
  },
  logLevel: 'warn',
});
