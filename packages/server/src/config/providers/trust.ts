import { isLoopbackHost, parsedUrl, type ProviderConfig } from '@gatehouse/contract';

/**
 * What an operator should hear about a provider's trust settings: which addresses an IdP is the
 * authority for, and which settings exist for tests only. The schemas refuse what can never be right
 * (trustEmail on github.com, or on Google without hostedDomains); these are the rest:
 *
 * - `warnings`: a setting that works but trusts an IdP for addresses it does not own. Printed by
 *   check-config, logged at start and at every reload, shown on the provider's page in the console.
 * - `testOnlySettings`: a setting that points a preset at a stand-in on loopback; refused in
 *   production mode (the config file and the console alike).
 */
export function providerWarnings(provider: ProviderConfig): string[] {
  const warnings: string[] = [];
  if (provider.kind === 'google' && provider.hostedDomains.length === 0 && provider.allowedDomains.length > 0) {
    warnings.push(
      "allowedDomains: Google vouches for an address at your domain only for your Workspace's accounts; any Google account can hold a verified address at any domain (a former employee's included). Set hostedDomains to your Workspace domains.",
    );
  }
  if (provider.kind === 'github') {
    if (provider.allowedDomains.length > 0) {
      warnings.push(
        "allowedDomains: GitHub lets anyone verify any address they can receive mail at once, and keeps it verified after they leave; it is not your domain's word. Admit people by allowedOrganizations instead.",
      );
    }
    if (provider.trustEmail) {
      warnings.push(
        'trustEmail: a GitHub Enterprise Server decides which addresses are verified; trust it to link by email only if its accounts and addresses come from your own directory (LDAP, SAML, Enterprise Managed Users).',
      );
    }
  }
  return warnings;
}

/** A setting and why it is refused. */
export interface SettingProblem {
  field: string;
  message: string;
}

/** The settings that exist for tests only (a stand-in IdP on loopback), each with why it is refused in production. */
export function testOnlySettings(provider: ProviderConfig): SettingProblem[] {
  const problems: SettingProblem[] = [];
  if (provider.kind === 'entra' && provider.loopbackStandIn !== undefined) {
    problems.push({ field: 'loopbackStandIn', message: 'is for tests only (it sends Microsoft sign-ins to a stand-in on this machine): refused in production mode' });
  }
  // A preset whose issuer is derived from its options (always https) names a loopback issuer only when a
  // test gave one in its place.
  const overridable = provider.kind === 'google' || provider.kind === 'okta' || provider.kind === 'auth0';
  const issuer = parsedUrl(provider.issuer);
  if (overridable && issuer && isLoopbackHost(issuer.hostname)) {
    problems.push({ field: 'issuer', message: `a loopback issuer in place of ${provider.kind}'s own is for tests only: refused in production mode (leave issuer out)` });
  }
  return problems;
}
