// The OpenID Provider's baseline: the same oidc-provider as Gatehouse's, on the same storage (Gatehouse's
// adapter, provide/adapter.ts, over its OpStore, on the same kind of database), with none of Gatehouse
// around it: no Fastify, no Gatehouse session, no policy, no login step, no hooks (findAccount answers one
// fixed account, loadExistingGrant is oidc-provider's default, client secrets are compared in the clear).
// One confidential client with Gatehouse's defaults for an app (client_secret_basic, RS256 ID tokens,
// refresh tokens rotated). The interaction step signs the fixed account in and grants what was asked at
// once, so that a browser following the redirects ends at the redirect URI with a code.
//
// Its argument is a JSON object: { databaseUrl? | sqlitePath, dataDir, clientId, secret, redirectUri }.
// It listens on an ephemeral 127.0.0.1 port and prints `listening <port>` once ready.
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { parseConfig } from '../packages/server/dist/config/load.js';
import { keepTickObjectShape } from '../packages/server/dist/http/tickObjectShape.js';
import { opAdapterFactory } from '../packages/server/dist/provide/adapter.js';
import { OpStore } from '../packages/server/dist/provide/opStore.js';
import { openDatabase } from '../packages/server/dist/storage/database.js';

// As Gatehouse does at start (bench/README.md, "Two kinds of process").
keepTickObjectShape();

const input = JSON.parse(process.argv[2] ?? '{}');
const database = input.databaseUrl ? { url: input.databaseUrl } : { path: input.sqlitePath };
const handle = await openDatabase(parseConfig({ dataDir: input.dataDir, database }, { env: {} }));
const store = new OpStore(handle.db);

const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'baseline' };
const ACCOUNT = 'bench-account';

const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = server.address().port;
const issuer = `http://localhost:${port}`;

const provider = new Provider(issuer, {
  adapter: opAdapterFactory(store),
  clients: [
    {
      client_id: input.clientId,
      client_secret: input.secret,
      redirect_uris: [input.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'RS256',
    },
  ],
  jwks: { keys: [jwk] },
  scopes: ['openid', 'offline_access', 'profile', 'email', 'groups'],
  claims: { email: ['email', 'email_verified'], profile: ['name', 'preferred_username'], groups: ['groups'] },
  // As Gatehouse's default for an app (claimsInIdToken): the scopes' claims in the ID token too.
  conformIdTokenClaims: false,
  features: { devInteractions: { enabled: false } },
  cookies: { keys: ['baseline-cookie-key-0123456789abcdef'] },
  rotateRefreshToken: true,
  routes: { authorization: '/oidc/authorize', token: '/oidc/token', userinfo: '/oidc/userinfo', jwks: '/oidc/jwks' },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  findAccount: async (_ctx, sub) => ({
    accountId: sub,
    claims: async () => ({ sub, email: 'alice@example.com', email_verified: true, name: 'Alice', preferred_username: 'alice', groups: ['staff'] }),
  }),
});
provider.on('server_error', (_ctx, error) => console.error('server_error', error));

const callback = provider.callback();
server.on('request', async (req, res) => {
  if (!req.url.startsWith('/interaction/')) return callback(req, res);
  try {
    // The login and consent steps, answered at once: the fixed account, everything asked granted.
    const details = await provider.interactionDetails(req, res);
    const grant = details.grantId ? await provider.Grant.find(details.grantId) : new provider.Grant({ accountId: ACCOUNT, clientId: details.params.client_id });
    grant.addOIDCScope(details.params.scope);
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId: ACCOUNT }, consent: { grantId } }, { mergeWithLastSubmission: false });
  } catch (error) {
    console.error('interaction', error);
    res.statusCode = 500;
    res.end();
  }
});

console.log(`listening ${port}`);
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    server.close();
    void handle.close().then(() => process.exit(0));
  });
}
