// The floor of a session-cache miss (bench/README.md, "At scale"): what no check of a session it has not
// seen before can skip, and nothing else, on plain node:http. Each request's `gatehouse_app` cookie is
// hashed and its session read with its person by Gatehouse's own statement (`SessionStore.findWithPerson`,
// by app token and origin, from the built server) on the same database as the node being measured,
// opened as Gatehouse opens it; the session must be active; the groups are read from the identity's
// claims; an assertion is signed for the app by Gatehouse's own signer (a fresh holder each time, so it
// always signs: a miss has no assertion to reuse); and the answer carries the five identity headers, as
// Gatehouse's forward-auth answer does (no-store, an empty body).
// Left out, as Gatehouse's own cost of a miss: the session cache's lookup and store, the provider and
// person status checks, the app's policy, the activity write, the Forwarded-header handling, the
// metrics. A check that finds no active session answers 401.
//
// Its argument is a JSON object: { databaseUrl? | sqlitePath, dataDir, appOrigin, issuer }.
// It listens on an ephemeral 127.0.0.1 port and prints `listening <port>` once ready.
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import { identityClaims } from '../packages/server/dist/accounts/accountStore.js';
import { AssertionSigner } from '../packages/server/dist/authorize/assertion.js';
import { identityHeaders } from '../packages/server/dist/authorize/identityHeaders.js';
import { parseConfig } from '../packages/server/dist/config/load.js';
import { keepTickObjectShape } from '../packages/server/dist/http/tickObjectShape.js';
import { isActive, SessionStore } from '../packages/server/dist/sessions/sessionStore.js';
import { hashSecret, isWellFormedSecret } from '../packages/server/dist/sessions/sessionToken.js';
import { openDatabase } from '../packages/server/dist/storage/database.js';

// As Gatehouse does at start (bench/README.md, "Two kinds of process").
keepTickObjectShape();

const input = JSON.parse(process.argv[2] ?? '{}');
const database = input.databaseUrl ? { url: input.databaseUrl } : { path: input.sqlitePath };
const handle = await openDatabase(parseConfig({ dataDir: input.dataDir, database }, { env: {} }), undefined, { migrate: false });
// findWithPerson decrypts nothing: no cipher is needed, and none is given.
const sessions = new SessionStore(handle.db, undefined, { idleTimeout: 0, absoluteLifetime: 0, touchInterval: 0 });
const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const signer = new AssertionSigner({ current: () => ({ kid: 'floor', privateKeyObject: privateKey }) }, input.issuer);
const COOKIE = /(?:^|;\s*)gatehouse_app=([^;]*)/;

const server = createServer(async (req, res) => {
  try {
    const token = COOKIE.exec(req.headers.cookie ?? '')?.[1];
    const found = isWellFormedSecret(token) ? await sessions.findWithPerson({ appTokenHash: hashSecret(token), appOrigin: input.appOrigin }) : undefined;
    if (!found || !isActive(found.session, Date.now())) {
      res.writeHead(401, { 'cache-control': 'no-store', 'content-length': 0 }).end();
      return;
    }
    const { user } = found;
    const groups = identityClaims(found.identity).groups;
    const assertion = signer.assertion({}, { userId: user.id, email: user.email, name: user.name, groups }, input.appOrigin);
    res.writeHead(200, { 'cache-control': 'no-store', 'content-length': 0, ...identityHeaders({ userId: user.id, email: user.email, name: user.name, groups, assertion }) }).end();
  } catch (error) {
    console.error('miss floor', error);
    res.writeHead(500, { 'content-length': 0 }).end();
  }
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
console.log(`listening ${server.address().port}`);
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    server.close();
    void handle.close().then(() => process.exit(0));
  });
}
