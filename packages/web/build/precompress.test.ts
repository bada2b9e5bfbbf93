import { mkdtemp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { precompress } from './precompress';

/** The plugin's two hooks, called as Vite calls them at the end of a build. */
async function runOn(outDir: string) {
  const plugin = precompress() as unknown as {
    configResolved(config: { root: string; build: { outDir: string } }): void;
    closeBundle(): Promise<void>;
  };
  plugin.configResolved({ root: path.dirname(outDir), build: { outDir: path.basename(outDir) } });
  await plugin.closeBundle();
}

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('precompress (build step)', () => {
  it('writes a brotli and a gzip copy of each text file worth it, the same bytes once decoded', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'web-build-'));
    const outDir = path.join(dir, 'dist');
    await mkdir(path.join(outDir, 'assets'), { recursive: true });
    const script = 'export const rows = [' + Array.from({ length: 500 }, (_, i) => `{ id: ${i}, label: "row ${i}" }`).join(', ') + '];\n';
    await writeFile(path.join(outDir, 'assets', 'index-AbC123.js'), script);
    await writeFile(path.join(outDir, 'sign-in.html'), `<!doctype html><title>Sign in</title>${'<p>x</p>'.repeat(300)}`);
    await writeFile(path.join(outDir, 'assets', 'tiny-XyZ789.css'), 'body{margin:0}');
    await writeFile(path.join(outDir, 'assets', 'photo-Q1w2E3.png'), Buffer.alloc(4096, 7));

    await runOn(outDir);

    const files = (await readdir(outDir, { recursive: true })).map((file) => file.split(path.sep).join('/')).sort();
    expect(files).toEqual([
      'assets',
      'assets/index-AbC123.js',
      'assets/index-AbC123.js.br',
      'assets/index-AbC123.js.gz',
      // Not compressed: too small to gain, or not text.
      'assets/photo-Q1w2E3.png',
      'assets/tiny-XyZ789.css',
      'sign-in.html',
      'sign-in.html.br',
      'sign-in.html.gz',
    ]);
    const js = path.join(outDir, 'assets', 'index-AbC123.js');
    const br = await readFile(`${js}.br`);
    expect(brotliDecompressSync(br).toString()).toBe(script);
    expect(gunzipSync(await readFile(`${js}.gz`)).toString()).toBe(script);
    expect(br.length).toBeLessThan(script.length / 4);
  });
});
