import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONTRACT, SERVER, WEB, contractZones, serverZones, webZones } from './walls.js';

/** The repository's root: the walls' paths are from here, whatever folder ESLint is run from. */
const ROOT = path.dirname(fileURLToPath(import.meta.url));

/**
 * The walls (walls.js holds them as data, docs/architecture.md "Walls" says why): eslint-plugin-import-x's
 * `no-restricted-paths` judges the file an import resolves to, so a wall holds at any depth
 * (`../../accounts/x.js` from a sub-folder is judged like `../accounts/x.js`). The resolver maps the
 * server's `.js` specifiers to their `.ts` sources, as TypeScript's NodeNext resolution does, and finds
 * the web's extensionless ones.
 */
const RESOLVER = createNodeResolver({ extensions: ['.ts', '.tsx', '.js', '.mjs', '.json'], extensionAlias: { '.js': ['.ts', '.tsx', '.js'] } });
const WALLED = [`${SERVER}/**/*.ts`, `${WEB}/**/*.{ts,tsx}`, `${CONTRACT}/**/*.ts`];

/**
 * No query outside a store: Kysely's query builders, its `sql` templates (sql`...`, sql<T>`...`) and
 * `sql`'s helpers (sql.raw, sql.ref, sql.lit, sql.join, ...) are used only in the files that own a table,
 * listed here one by one: the `*Store.ts` files, storage/ (the database itself, its migrations, the
 * copy between databases), and the stores named before that habit.
 */
const STORES = [
  `${SERVER}/**/*Store.ts`,
  `${SERVER}/storage/**`,
  `${SERVER}/audit/auditLog.ts`,
  `${SERVER}/accounts/signInSettings.ts`,
  `${SERVER}/authenticate/signInAttempts.ts`,
  `${SERVER}/keys/signingKeys.ts`,
  `${SERVER}/sessions/appSessions.ts`,
  `${SERVER}/accounts/userDirectory.ts`,
];
const QUERY = 'CallExpression[callee.property.name=/^(selectFrom|selectNoFrom|insertInto|replaceInto|updateTable|deleteFrom|mergeInto|executeQuery)$/]';
const SQL_TEMPLATE = "TaggedTemplateExpression[tag.type='Identifier'][tag.name='sql']";
const SQL_HELPER = "MemberExpression[object.type='Identifier'][object.name='sql']";
const QUERY_MESSAGE = 'Only stores query the database: move this query into the store that owns the table.';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'data/**', 'test-results/**', 'playwright-report/**', '**/*.tsbuildinfo'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-console': 'off',
      eqeqeq: ['error', 'always'],
    },
  },
  {
    files: WALLED,
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [RESOLVER] },
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: ROOT, zones: [...serverZones(), ...webZones(ROOT), ...contractZones()] }],
      // A relative import the resolver cannot find would pass every wall unjudged: refuse it instead (the
      // web's `?raw` imports of docs/ are Vite's, and bare specifiers are packages).
      'import-x/no-unresolved': ['error', { ignore: ['^[^.]', '\\?raw$'] }],
    },
  },
  {
    files: [`${SERVER}/**/*.ts`],
    ignores: STORES,
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: QUERY, message: QUERY_MESSAGE },
        { selector: SQL_TEMPLATE, message: QUERY_MESSAGE },
        { selector: SQL_HELPER, message: QUERY_MESSAGE },
      ],
      'no-restricted-imports': ['error', { paths: [{ name: 'kysely', importNames: ['sql'], message: QUERY_MESSAGE }] }],
    },
  },
  {
    // The contract runs in the server and in the browser: nothing of either, and nothing Node-only (its
    // relative imports stay in its own files: walls.js, contractZones).
    files: [`${CONTRACT}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(node:|@gatehouse/)', message: 'The contract is shared by the server and the front end: it imports only zod and its own files.' }] },
      ],
    },
  },
  {
    files: ['packages/web/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: reactHooks.configs.recommended.rules,
  },
);
