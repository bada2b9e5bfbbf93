import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type Provider from 'oidc-provider';
import { sessionOfGrant, type GrantLedger } from './access.js';
import type { OidcClientCatalogue } from './clients.js';

type Pairwise = NonNullable<Configuration['pairwiseIdentifier']>;

const SUCCEEDED = Symbol('authorization succeeded');

/**
 * Each authorization that succeeds records its grant with the Gatehouse session it was made in (its
 * id names it: provide/access.ts), the client's `sid` and the `sub` the client was given, before the
 * answer carrying the code is written: ending the session can then end the grant and tell the client
 * (back-channel logout). A grant used again is recorded again (its scopes and expiry follow it).
 */
export function recordGrants(provider: Provider, ledger: GrantLedger, clients: OidcClientCatalogue, pairwise: Pairwise): void {
  (provider.on as (name: string, listener: (ctx: KoaContextWithOIDC) => void) => unknown).call(provider, 'authorization.success', (ctx: KoaContextWithOIDC) => {
    (ctx.state as Record<symbol, boolean>)[SUCCEEDED] = true;
  });
  provider.use(async (ctx, next) => {
    await next();
    const { oidc } = ctx as KoaContextWithOIDC;
    if (!(ctx.state as Record<symbol, boolean>)[SUCCEEDED] || !oidc?.client || !oidc.session?.accountId || !oidc.grant?.jti) return;
    const found = clients.client(oidc.client.clientId);
    const sessionId = sessionOfGrant(oidc.grant.jti);
    const sid = oidc.session.sidFor(oidc.client.clientId);
    if (!found || !sessionId || !sid) return;
    const accountId = oidc.session.accountId;
    await ledger.recordGrant({
      grantId: oidc.grant.jti,
      clientId: found.clientId,
      appId: found.app.id,
      userId: accountId,
      sessionId,
      sid,
      subject: oidc.client.subjectType === 'pairwise' ? await pairwise(ctx as KoaContextWithOIDC, accountId, oidc.client) : accountId,
      scopes: [...(oidc.grant.getOIDCScope()?.split(' ') ?? [])].filter(Boolean),
      expiresAt: (oidc.grant.exp ?? Math.floor(Date.now() / 1000)) * 1000,
    });
  });
}
