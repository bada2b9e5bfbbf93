import { parseConfig } from '../../src/config/load.js';
import { openDatabase } from '../../src/storage/database.js';
import { logoutDeliverySuite } from './logoutDeliverySuite.js';

/** The back-channel logout outbox on SQLite, the embedded default: a new in-memory database per test. */
logoutDeliverySuite('SQLite', () => openDatabase(parseConfig({ dataDir: '.', database: { path: ':memory:' } }, { env: {} })), { realConcurrency: false });
