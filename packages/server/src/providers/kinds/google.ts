import type { ProviderOf } from '../../config/schema.js';
import { connectOidc } from './oidc.js';

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
  // Threat: a personal Gmail account (no hd) or another Workspace tenant (another hd) passing because
  // hd was only asked for. The ID token's hd is Google's word for the account's domain; the rule that
  // reads it (hostedDomains) is the admission judge's (accounts/admission.ts), at sign-in, at every
  // refresh and whenever the rules change. A refresh without an ID token reads userinfo's hd.
  facts(_provider, idToken, claims) {
    if (idToken) return { hostedDomain: typeof idToken.hd === 'string' ? idToken.hd.toLowerCase() : null };
    return typeof claims.hd === 'string' ? { hostedDomain: claims.hd.toLowerCase() } : {};
  },
});
