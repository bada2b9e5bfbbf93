import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The server's structure drawn from its own imports (ts.preProcessFile, type-only imports included):
 * no import cycle, and none of the arrows docs/architecture.md ("Walls") forbids. eslint.config.js
 * refuses the same arrows as they are written; this sees the whole graph.
 */
const SRC = fileURLToPath(new URL('../src', import.meta.url));
const COMPOSITION_ROOT = new Set(['app.ts', 'services.ts', 'main.ts', 'devServices.ts', 'reload.ts']);
/** The root's own files, and cli/ (one file per command main.ts runs). */
const inRoot = (file: string) => COMPOSITION_ROOT.has(file) || file.startsWith('cli/');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** file → the server files it imports, both relative to src/ with forward slashes. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const from = path.relative(SRC, file).split(path.sep).join('/');
    const imports = ts
      .preProcessFile(readFileSync(file, 'utf8'), true, true)
      .importedFiles.map((imported) => imported.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => path.relative(SRC, path.resolve(path.dirname(file), name.replace(/\.js$/, '.ts'))).split(path.sep).join('/'));
    graph.set(from, imports);
  }
  return graph;
}

const areaOf = (file: string) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : file);

/**
 * The layers, bottom first (docs/architecture.md, "Walls"): a file imports only from its own area or
 * from a lower layer; areas of one layer never import each other.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['config'],
  ['storage', 'cluster', 'errors.ts', 'logger.ts'],
  ['events'],
  ['keys', 'secrets.ts'],
  ['http'],
  ['operations', 'limits'],
  ['accounts', 'apps', 'audit'],
  ['sessions'],
  ['authorize', 'providers'],
  ['authenticate', 'proxy'],
  ['admin', 'api'],
  ['app.ts', 'services.ts', 'main.ts', 'devServices.ts', 'reload.ts', 'cli'],
];
const layerOf = (area: string) => LAYERS.findIndex((layer) => layer.includes(area));

/** Why an import is not allowed, or undefined. */
function forbidden(from: string, to: string): string | undefined {
  const [a, b] = [areaOf(from), areaOf(to)];
  if (a === b) return undefined;
  if (to === 'services.ts' && !inRoot(from)) return 'only the composition root sees Services';
  if ((b === 'admin' || b === 'api') && !inRoot(from)) return 'admin/ and api/ are imported by the composition root only';
  if (b === 'cli' && from !== 'main.ts') return 'cli/ holds the commands main.ts runs: only main.ts imports it';
  if (a === 'config') return 'config/ is at the bottom';
  if (a === 'storage' && b !== 'config') return 'storage/ imports only config/';
  if (a === 'events' && b !== 'config' && b !== 'storage' && b !== 'cluster') return 'events/ imports only config/, storage/ and cluster/';
  if ((a === 'authorize' || a === 'proxy' || a === 'sessions') && (b === 'authenticate' || b === 'providers')) return `${a}/ never imports ${b}/ (the code that talks to IdPs)`;
  if (inRoot(from)) return undefined;
  if (layerOf(a) === -1 || layerOf(b) === -1) return 'every area has a layer: add it to LAYERS (and to docs/architecture.md)';
  if (layerOf(b) >= layerOf(a)) return `${b} is not below ${a}`;
  return undefined;
}

/** Every import cycle (Tarjan's strongly connected components with more than one file, or a self-import). */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const stack: string[] = [];
  const onStack = new Set<string>();
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const found: string[][] = [];
  const visit = (file: string) => {
    indices.set(file, index);
    low.set(file, index++);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (!indices.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, indices.get(next)!));
      }
    }
    if (low.get(file) !== indices.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)!.includes(file)) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!indices.has(file)) visit(file);
  return found;
}

describe('the server’s import graph', () => {
  const graph = importGraph();

  it('reads the whole source tree', () => {
    expect(graph.has('app.ts') && graph.has('proxy/hotPath.ts') && graph.has('config/schema.ts')).toBe(true);
  });

  it('draws no forbidden arrow', () => {
    const wrong = [...graph].flatMap(([from, imports]) => imports.flatMap((to) => (forbidden(from, to) ? [`${from} -> ${to}: ${forbidden(from, to)}`] : [])));
    expect(wrong).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('finds a cycle and a forbidden arrow when there is one (the check itself)', () => {
    const sample = new Map([
      ['a/x.ts', ['b/y.ts']],
      ['b/y.ts', ['a/x.ts']],
      ['c.ts', []],
    ]);
    expect(cycles(sample)).toEqual([['a/x.ts', 'b/y.ts']]);
    expect(forbidden('proxy/hotPath.ts', 'authenticate/signOut.ts')).toBeDefined();
    expect(forbidden('config/schema.ts', 'accounts/email.ts')).toBeDefined();
    expect(forbidden('authorize/checkAccess.ts', 'services.ts')).toBeDefined();
    expect(forbidden('app.ts', 'services.ts')).toBeUndefined();
    expect(forbidden('cli/start.ts', 'services.ts')).toBeUndefined();
    expect(forbidden('main.ts', 'cli/start.ts')).toBeUndefined();
    expect(forbidden('app.ts', 'cli/start.ts')).toBeDefined();
    expect(forbidden('authorize/checkAccess.ts', 'cli/usage.ts')).toBeDefined();
    expect(forbidden('accounts/admins.ts', 'authorize/policy.ts')).toBeDefined();
    expect(forbidden('http/spa.ts', 'accounts/admins.ts')).toBeDefined();
    expect(forbidden('proxy/appHost.ts', 'authorize/checkAccess.ts')).toBeUndefined();
    expect(forbidden('storage/database.ts', 'events/changes.ts')).toBeDefined();
    expect(forbidden('events/pgChanges.ts', 'errors.ts')).toBeDefined();
    expect(forbidden('events/pgChanges.ts', 'storage/database.ts')).toBeUndefined();
    expect(forbidden('keys/signingKeys.ts', 'sessions/tokenCipher.ts')).toBeDefined();
    expect(forbidden('authorize/assertion.ts', 'keys/signingKeys.ts')).toBeUndefined();
    expect(forbidden('apps/appStore.ts', 'accounts/admins.ts')).toBeDefined();
    expect(forbidden('apps/appStore.ts', 'events/changes.ts')).toBeUndefined();
    expect(forbidden('proxy/hotPath.ts', 'apps/appRegistry.ts')).toBeUndefined();
    expect(forbidden('http/errorHandler.ts', 'operations/metrics.ts')).toBeDefined();
    expect(forbidden('operations/metrics.ts', 'sessions/guard.ts')).toBeDefined();
    expect(forbidden('limits/sharedLimits.ts', 'operations/metrics.ts')).toBeDefined();
    expect(forbidden('authenticate/deps.ts', 'limits/sharedLimits.ts')).toBeUndefined();
  });
});
