import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { refusal as forbidden } from '../../../walls.js';

/**
 * The server's structure drawn from its own imports (ts.preProcessFile, type-only imports included):
 * no import cycle, and none of the arrows docs/architecture.md ("Walls") forbids. The walls are walls.js's,
 * the same data eslint.config.js refuses each import by (test/walls.test.ts shows the two agree); this
 * sees the whole graph at once.
 */
const SRC = fileURLToPath(new URL('../src', import.meta.url));

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
    expect(forbidden('config/providers/oidc.ts', 'accounts/admins.ts')).toBeDefined();
    expect(forbidden('storage/migrations/0001_initial.ts', 'events/changes.ts')).toBeDefined();
    expect(forbidden('keys/signingKeys.ts', 'errors.ts')).toBeDefined();
    expect(forbidden('authorize/checkAccess.ts', 'providers/providerRegistry.ts')).toBeDefined();
    expect(forbidden('authenticate/callback.ts', 'providers/providerRegistry.ts')).toBeUndefined();
    expect(forbidden('cluster/channel.ts', 'storage/database.ts')).toBeDefined();
    expect(forbidden('events/clusterChanges.ts', 'cluster/channel.ts')).toBeUndefined();
    expect(forbidden('unplaced/x.ts', 'config/schema.ts')).toBeDefined();
    expect(forbidden('accounts/admins.ts', 'unplaced/x.ts')).toBeDefined();
  });
});
