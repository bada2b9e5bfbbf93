import { parseConfig } from '../../src/config/load.js';
import { openDatabase } from '../../src/storage/database.js';
import { admissionModelSuite } from './admissionModel.js';
import { opStoreSuite } from './opStoreSuite.js';
import { storeSuite } from './storeSuite.js';

/** The storage contract on SQLite, the embedded default: a new in-memory database per test. */
storeSuite('SQLite', () => openDatabase(parseConfig({ dataDir: '.', database: { path: ':memory:' } }, { env: {} })), { realConcurrency: false });

opStoreSuite('SQLite', () => openDatabase(parseConfig({ dataDir: '.', database: { path: ':memory:' } }, { env: {} })), { realConcurrency: false });

admissionModelSuite('SQLite', () => openDatabase(parseConfig({ dataDir: '.', database: { path: ':memory:' } }, { env: {} })), { runs: 400, steps: 25 });
