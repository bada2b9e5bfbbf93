import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * The server's walls (docs/architecture.md, "Walls"): a wrong import is a lint error. Each
 * area's files get one no-restricted-imports entry — a later block would replace an earlier one's rule,
 * not add to it — made of the arrows nobody may draw plus the area's own. The composition root (app.ts,
 * services.ts, main.ts, devServices.ts, reload.ts, and cli/, a file per command of main.ts) sees every part. packages/server/test/architecture.test.ts
 * draws the same walls from the import graph, and also refuses cycles.
 */
const SERVER = 'packages/server/src';
const COMPOSITION_ROOT = ['app.ts', 'services.ts', 'main.ts', 'devServices.ts', 'reload.ts', 'cli/**'].map((file) => `${SERVER}/${file}`);
const AREAS = ['accounts', 'admin', 'api', 'apps', 'audit', 'authenticate', 'authorize', 'cluster', 'config', 'events', 'http', 'keys', 'limits', 'operations', 'providers', 'proxy', 'sessions', 'storage'];

/** An import of `area/` from a file one level below src/. */
const into = (...areas) => `^\\.\\./(${areas.join('|')})/`;
const ONLY_THE_ROOT = 'Only the composition root (app.ts, services.ts, main.ts, devServices.ts, reload.ts, cli/) sees Services: declare the dependencies this module takes.';
const COMMANDS = 'cli/ holds the commands main.ts runs: nothing else imports them.';
const EDGES = 'admin/ and api/ are the edges: only the composition root registers them.';
const NOT_AUTHENTICATE = 'takes what it needs of authenticate/ (the code that talks to IdPs) as an interface it defines, and never imports it.';
const ABOVE = 'is above it: the layers (docs/architecture.md, "Walls") only import downwards.';
const OWN = {
  config: [{ regex: '^\\.\\./', message: 'config/ is at the bottom: it imports nothing from the rest of the server.' }],
  storage: [{ regex: '^\\.\\./(?!config/)', message: 'storage/ knows no feature: it imports only config/.' }],
  cluster: [{ regex: '^\\.\\./(?!config/)', message: 'cluster/ carries messages between a node\'s processes and knows no feature: it imports only config/.' }],
  events: [{ regex: '^\\.\\./(?!config/|storage/|cluster/)', message: 'events/ carries changes and knows no feature: it imports only config/, storage/ and cluster/.' }],
  keys: [{ regex: '^\\.\\./(?!config/|storage/|events/)', message: 'keys/ knows no feature: it imports only config/, storage/ and events/ (take anything else as an interface).' }],
  http: [{ regex: into('limits', 'operations', 'accounts', 'apps', 'audit', 'sessions', 'authorize', 'authenticate', 'proxy'), message: `That area ${ABOVE} http/ is infrastructure: take what a route needs as a dependency.` }],
  operations: [{ regex: into('limits', 'accounts', 'apps', 'audit', 'sessions', 'authorize', 'authenticate', 'proxy'), message: `That area ${ABOVE} operations/ is infrastructure: take what it observes as a dependency.` }],
  limits: [{ regex: into('operations', 'accounts', 'apps', 'audit', 'sessions', 'authorize', 'authenticate', 'proxy'), message: `That area ${ABOVE} limits/ is infrastructure: it counts, whoever asks.` }],
  accounts: [{ regex: into('apps', 'audit', 'sessions', 'authorize', 'authenticate', 'proxy'), message: `That area ${ABOVE}` }],
  apps: [{ regex: into('accounts', 'audit', 'sessions', 'authorize', 'authenticate', 'proxy'), message: `That area ${ABOVE}` }],
  audit: [{ regex: into('accounts', 'apps', 'sessions', 'authorize', 'authenticate', 'proxy'), message: `That area ${ABOVE}` }],
  sessions: [
    { regex: into('authenticate'), message: `sessions/ ${NOT_AUTHENTICATE}` },
    { regex: into('authorize', 'proxy'), message: `That area ${ABOVE}` },
  ],
  authorize: [
    { regex: into('authenticate'), message: `Deciding ${NOT_AUTHENTICATE}` },
    { regex: into('proxy'), message: `proxy/ ${ABOVE}` },
  ],
  proxy: [{ regex: into('authenticate'), message: `Forwarding ${NOT_AUTHENTICATE}` }],
  authenticate: [{ regex: into('proxy'), message: 'authenticate/ and proxy/ are peers: neither imports the other.' }],
  providers: [{ regex: into('authorize', 'authenticate', 'proxy'), message: `That area ${ABOVE} providers/ is what a provider is (definition, registry, store, kinds); the flows that use it import it.` }],
};

/** One area's walls: nobody but the root imports services.ts, admin/ or api/ (each may import its own files), plus its own. */
const zone = (area) => ({
  files: [`${SERVER}/${area}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          { regex: '^\\.\\./services\\.js$', message: ONLY_THE_ROOT },
          { regex: into(...['admin', 'api'].filter((edge) => edge !== area)), message: EDGES },
          { regex: into('cli'), message: COMMANDS },
          ...(OWN[area] ?? []),
        ],
      },
    ],
  },
});

/** No query outside a store: Kysely's query builders are called only in the files that own a table. */
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
const QUERY = "CallExpression[callee.property.name=/^(selectFrom|insertInto|updateTable|deleteFrom)$/]";

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
  ...AREAS.map(zone),
  {
    // The providers' trust rules (config/providers/) may import the rest of config/, nothing above it.
    files: [`${SERVER}/config/providers/**/*.ts`],
    rules: { 'no-restricted-imports': ['error', { patterns: OWN.config.map((wall) => ({ ...wall, regex: '^\\.\\./\\.\\./' })) }] },
  },
  {
    files: [`${SERVER}/*.ts`],
    ignores: COMPOSITION_ROOT,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^\\./(services\\.js$|admin/|api/)', message: ONLY_THE_ROOT },
            { regex: '^\\./cli/', message: COMMANDS },
          ],
        },
      ],
    },
  },
  {
    files: [`${SERVER}/**/*.ts`],
    ignores: STORES,
    rules: { 'no-restricted-syntax': ['error', { selector: QUERY, message: 'Only stores query the database: move this query into the store that owns the table.' }] },
  },
  {
    // The contract runs in the server and in the browser: nothing of either, and nothing Node-only.
    files: ['packages/contract/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(node:|@gatehouse/|\\.\\./\\.\\./)', message: 'The contract is shared by the server and the front end: it imports only zod and its own files.' }] },
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
