import type { ProviderOf } from '../../config/schema.js';
import { connectOidc } from './oidc.js';
import { refused } from './refusal.js';

type Google = ProviderOf<'google'>;

/**
 * Google: OpenID Connect with one quirk, `hd`. The authorization parameter `hd` only narrows Google's
 * account chooser — anyone can remove it from the URL — so the domain is checked where Google vouches
 * for it: the ID token's `hd` claim, present only for Workspace accounts, and Google's own word for
 * the account's domain (its email may be on another domain). Google sends email_verified.
 */
export const connectGoogle = connectOidc<Google>({
  // Switching account opens Google's account chooser.
  chooseAccountPrompt: 'select_account',
  authorizationParams(provider): Record<string, string> {
    // One domain: Google preselects it. Several: "*" asks for any Workspace account (Google's docs).
    if (provider.hostedDomains.length === 0) return {};
    return { hd: provider.hostedDomains.length === 1 ? provider.hostedDomains[0]! : '*' };
  },
  checkIdToken(provider, claims) {
    if (provider.hostedDomains.length === 0) return;
    // Threat: a personal Gmail account (no hd) or another Workspace tenant (another hd) passing because
    // hd was only asked for. Checked on every ID token, at sign-in and at refresh.
    const hd = typeof claims.hd === 'string' ? claims.hd.toLowerCase() : undefined;
    if (!hd || !provider.hostedDomains.includes(hd)) {
      throw refused(provider, 'hosted_domain_not_allowed', claims, hd ? `its Google Workspace domain ${hd} is not one of this provider's hostedDomains` : 'it is not a Google Workspace account of an allowed domain (no hd claim)');
    }
  },
});
