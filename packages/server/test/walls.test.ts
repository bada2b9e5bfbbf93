import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';
import { COMPOSITION_ROOT, LAYERS, SERVER, refusal } from '../../../walls.js';

/**
 * The walls tried with planted violations: eslint.config.js, through ESLint's own API, lints source
 * text placed (never written) at a path of the tree, and must refuse each kind of wrong arrow with its
 * reason and let a right one pass. A wall that lets its violation through fails here, not in review.
 */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

let eslint: ESLint;
beforeAll(() => {
  eslint = new ESLint({ cwd: ROOT });
});

interface Problem {
  rule: string | null;
  line: number;
  message: string;
}

/** The problems ESLint finds in `code` as if it were the file `file` (from the repository's root). */
async function lint(file: string, code: string): Promise<Problem[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result!.messages.map((problem) => ({ rule: problem.ruleId, line: problem.line, message: problem.message }));
}

const WALL = 'import-x/no-restricted-paths';
const QUERY = 'Only stores query the database';

describe('the server’s walls, at any depth', () => {
  it('refuses a `../../` import across a wall from a sub-folder (config/providers/, storage/migrations/, authenticate/providers/)', async () => {
    expect(await lint(`${SERVER}/config/providers/planted.ts`, "import '../../accounts/admins.js';\n")).toEqual([
      { rule: WALL, line: 1, message: expect.stringContaining('config/ is at the bottom: it imports nothing from the rest of the server') },
    ]);
    expect(await lint(`${SERVER}/storage/migrations/planted.ts`, "import '../../events/changes.js';\n")).toEqual([
      { rule: WALL, line: 1, message: expect.stringContaining('storage/ knows no feature') },
    ]);
    expect(await lint(`${SERVER}/authenticate/providers/planted.ts`, "import '../../admin/index.js';\n")).toEqual([
      { rule: WALL, line: 1, message: expect.stringContaining('admin/ and api/ are the edges') },
    ]);
    // Deeper than any folder today, and by a path that wanders through another area first.
    expect(await lint(`${SERVER}/accounts/a/b/c/planted.ts`, "import '../../../../http/../sessions/guard.js';\n")).toEqual([
      { rule: WALL, line: 1, message: expect.stringContaining('accounts/ imports only the layers below it') },
    ]);
  });

  it('refuses an upward import, and an area’s own named wall', async () => {
    expect(await lint(`${SERVER}/http/planted.ts`, "import '../accounts/admins.js';\n")).toEqual([
      { rule: WALL, line: 1, message: expect.stringContaining('http/ imports only the layers below it') },
    ]);
    expect(await lint(`${SERVER}/proxy/planted.ts`, "import '../authenticate/signOut.js';\n")).toEqual([
      { rule: WALL, line: 1, message: expect.stringContaining('never imports them') },
    ]);
    expect(await lint(`${SERVER}/sessions/planted.ts`, "import type { Services } from '../services.js';\nexport type S = Services;\n")).toEqual([
      { rule: WALL, line: 1, message: expect.stringContaining('Only the composition root') },
    ]);
  });

  it('refuses a relative import it cannot resolve, which no wall could judge', async () => {
    expect(await lint(`${SERVER}/http/planted.ts`, "import '../../src/accounts/nowhere.js';\n")).toEqual([
      { rule: 'import-x/no-unresolved', line: 1, message: expect.stringContaining('Unable to resolve path') },
    ]);
  });

  it('lets a downward import pass, at any depth, and the composition root see everything', async () => {
    expect(await lint(`${SERVER}/authorize/planted.ts`, "import '../accounts/admins.js';\nimport '../storage/database.js';\n")).toEqual([]);
    expect(await lint(`${SERVER}/authenticate/providers/planted.ts`, "import '../../sessions/guard.js';\nimport '../../config/schema.js';\n")).toEqual([]);
    expect(await lint(`${SERVER}/app.ts`, "import './admin/index.js';\nimport './services.js';\n")).toEqual([]);
  });

  /** One real file of each area, to import (walls judge files that exist). */
  const SRC = path.join(ROOT, SERVER);
  const sample = (area: string): string | undefined => {
    if (area.endsWith('.ts')) return area;
    try {
      const file = readdirSync(path.join(SRC, area)).sort().find((name) => name.endsWith('.ts'));
      return file && `${area}/${file}`;
    } catch {
      return undefined; // an area of the data that has no folder yet
    }
  };

  it('agrees with walls.js (and so with test/architecture.test.ts) on every arrow between two areas', async () => {
    const areas = [...LAYERS.flat(), ...COMPOSITION_ROOT].filter((area) => sample(area));
    const disagreements: string[] = [];
    for (const from of areas) {
      // A folder's file two levels down, so that every import climbs `../../../`.
      const file = from.endsWith('.ts') ? from : `${from}/planted/deeper/planted.ts`;
      const up = '../'.repeat(file.split('/').length - 1) || './';
      const targets = areas.filter((to) => to !== from).map((to) => sample(to)!);
      const code = targets.map((target) => `import '${up}${target.replace(/\.ts$/, '.js')}';`).join('\n');
      const problems = await lint(`${SERVER}/${file}`, `${code}\n`);
      targets.forEach((target, index) => {
        const expected = refusal(file, target);
        const found = problems.filter((problem) => problem.line === index + 1);
        const refused = found.length === 1 && found[0]!.rule === WALL && found[0]!.message.includes(expected ?? '\0');
        if (expected ? !refused : found.length > 0) disagreements.push(`${file} -> ${target}: walls.js ${expected ? 'refuses' : 'allows'}, lint says ${JSON.stringify(found)}`);
      });
    }
    expect(disagreements).toEqual([]);
  });
});

describe('the query rule: only stores query the database', () => {
  it('refuses a `sql` template and `sql`’s helpers outside a store', async () => {
    const code = [
      "import { sql } from 'kysely';",
      'export const one = sql<number>`select 1`;',
      "export const column = sql.ref('email');",
      "export const raw = sql.raw('drop table users');",
    ].join('\n');
    const problems = await lint(`${SERVER}/authorize/planted.ts`, `${code}\n`);
    expect(problems.map((problem) => [problem.line, problem.rule])).toEqual([
      [1, 'no-restricted-imports'],
      [2, 'no-restricted-syntax'],
      [3, 'no-restricted-syntax'],
      [4, 'no-restricted-syntax'],
    ]);
    for (const problem of problems) expect(problem.message).toContain(QUERY);
  });

  it('refuses `sql` under another name, and a query builder, outside a store', async () => {
    const renamed = await lint(`${SERVER}/events/planted.ts`, "import { sql as q } from 'kysely';\nexport const one = q`select 1`;\n");
    expect(renamed).toEqual([{ rule: 'no-restricted-imports', line: 1, message: expect.stringContaining(QUERY) }]);
    const builder = await lint(`${SERVER}/sessions/planted.ts`, "import type { Db } from '../storage/database.js';\nexport const all = (db: Db) => db.selectFrom('sessions').selectAll().execute();\n");
    expect(builder).toEqual([{ rule: 'no-restricted-syntax', line: 2, message: expect.stringContaining(QUERY) }]);
  });

  it('lets a store, storage/ and a migration query', async () => {
    const code = "import { sql } from 'kysely';\nexport const one = sql<number>`select 1`;\nexport const column = sql.ref('email');\n";
    expect(await lint(`${SERVER}/accounts/plantedStore.ts`, code)).toEqual([]);
    expect(await lint(`${SERVER}/storage/planted.ts`, code)).toEqual([]);
    expect(await lint(`${SERVER}/storage/migrations/9999_planted.ts`, code)).toEqual([]);
  });
});

describe('the web’s feature walls', () => {
  const WEB = 'packages/web/src';

  it('refuses a feature importing another feature, at any depth', async () => {
    expect(await lint(`${WEB}/features/users/components/Planted.tsx`, "import '../../audit/api/getAuditLog';\n")).toEqual([
      { rule: WALL, line: 1, message: expect.stringContaining('A feature imports no other feature') },
    ]);
    expect(await lint(`${WEB}/features/users/components/deeper/Planted.tsx`, "import '../../../../features/auth/utils/returnTo';\n")).toEqual([
      { rule: WALL, line: 1, message: expect.stringContaining('A feature imports no other feature') },
    ]);
  });

  it('refuses a feature importing app/ (the routes) or the sign-in page', async () => {
    expect(await lint(`${WEB}/features/users/components/Planted.tsx`, "import '../../../app/router';\n")).toEqual([
      { rule: WALL, line: 1, message: expect.stringContaining('import features, never the other way') },
    ]);
    expect(await lint(`${WEB}/features/auth/utils/planted.ts`, "import '../../../signIn/api';\n")).toEqual([
      { rule: WALL, line: 1, message: expect.stringContaining('import features, never the other way') },
    ]);
  });

  it('refuses shared code importing a feature', async () => {
    expect(await lint(`${WEB}/lib/planted.ts`, "import '../features/adminApps/utils/appProblems';\n")).toEqual([
      { rule: WALL, line: 1, message: expect.stringContaining('Shared code (components/, lib/, config/) imports no feature') },
    ]);
  });

  it('lets a feature import its own files and the shared code, and a route import features', async () => {
    const feature = "import '../api/getUsers';\nimport '../../../components/PageTitle';\nimport '../../../lib/apiClient';\n";
    expect(await lint(`${WEB}/features/users/components/Planted.tsx`, feature)).toEqual([]);
    expect(await lint(`${WEB}/app/routes/planted.tsx`, "import '../../features/users/components/UsersTable';\nimport '../../features/audit/api/getAuditLog';\n")).toEqual([]);
  });
});

describe('the contract’s wall', () => {
  it('refuses a relative import out of the contract, from any depth, and lets its own files pass', async () => {
    expect(await lint('packages/contract/src/definitions/planted.ts', "import '../../../server/src/errors.js';\n")).toEqual([
      { rule: WALL, line: 1, message: expect.stringContaining('The contract is shared by the server and the front end') },
    ]);
    expect(await lint('packages/contract/src/definitions/deeper/planted.ts', "import '../../paths.js';\nimport '../app.js';\n")).toEqual([]);
  });
});
