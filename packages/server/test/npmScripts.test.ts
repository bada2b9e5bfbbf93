import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const scripts = (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { scripts: Record<string, string> }).scripts;

/** A built file stands for its TypeScript source (dist/x.js ← src/x.ts), so this holds before a build too. */
function exists(file: string): boolean {
  return existsSync(`${root}${file}`) || existsSync(`${root}${file.replace('/dist/', '/src/').replace(/\.js$/, '.ts')}`);
}

describe('npm scripts', () => {
  // Regression: `npm start`, the README's first command, once ran a launcher that was never committed.
  it('run only files that are in the repository', () => {
    const run = Object.entries(scripts).flatMap(([name, command]) =>
      [...command.matchAll(/\b(?:node|tsx|bash)\s+(\S+\.(?:m?js|ts|sh))/g)].map((match) => ({ name, file: match[1]! })),
    );
    expect(run.map(({ name }) => name)).toEqual(expect.arrayContaining(['start', 'test', 'bench']));
    expect(run.filter(({ file }) => !exists(file))).toEqual([]);
  });

  it('start the built server with its built-in defaults', () => {
    expect(scripts.start).toBe('npm run build && node packages/server/dist/main.js start');
  });
});
