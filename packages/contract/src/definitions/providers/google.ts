import { emailDomainSchema } from '../email.js';
import { z } from 'zod';
import { checkIssuerOverride, checkOidc, issuerOverride, oidcFields, withCreateUsers } from './common.js';
import type { ProviderKindPreset } from './preset.js';

export const GOOGLE_ISSUER = 'https://accounts.google.com';

/**
 * Google (accounts.google.com). `hostedDomains`: the Google Workspace domains whose accounts may sign
 * in, checked in the ID token's `hd` claim (requested as the `hd` parameter too, which is only a hint).
 */
export const googleProviderSchema = z
  .object({
    ...oidcFields,
    kind: z.literal('google'),
    issuer: issuerOverride,
    hostedDomains: z.array(emailDomainSchema).max(50).default([]),
  })
  .strict()
  .superRefine((provider, ctx) => {
    checkOidc(provider, ctx);
    checkIssuerOverride(provider.issuer, GOOGLE_ISSUER, ctx);
    // Threat: account takeover by email. Any Google account can hold a verified address at any domain
    // (a former employee's personal account keeps their work address); Google vouches for your domain's
    // addresses only for your Workspace's accounts, which hostedDomains admits alone.
    if (provider.trustEmail && provider.hostedDomains.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['trustEmail'],
        message: "needs hostedDomains: without it any Google account, with any verified address, could link into the user with that email; Google vouches for your addresses only for your Workspace's accounts",
      });
    }
  })
  .transform(({ issuer, ...provider }) => {
    const withIssuer = { ...provider, issuer: issuer ?? GOOGLE_ISSUER };
    // A Workspace-only Google is not the whole world: like allowedDomains, it lets new people in by default.
    return { ...withCreateUsers(withIssuer), createUsers: provider.createUsers ?? (provider.allowedDomains.length > 0 || provider.hostedDomains.length > 0) };
  });

export const googlePreset: ProviderKindPreset = {
  kind: 'google',
  protocol: 'oidc',
  label: 'Google',
  description: 'Google accounts; with hosted domains, only accounts of your Google Workspace (checked in the ID token).',
  docs: 'docs/providers/google.md',
  fields: [
    {
      name: 'hostedDomains',
      label: 'Google Workspace domains',
      help: "Only accounts of these Workspace domains may sign in (the ID token's hd claim). Empty: any Google account, personal Gmail included.",
      type: 'list',
      required: false,
      placeholder: 'example.com',
    },
  ],
  defaults: { scopes: ['openid', 'email', 'profile'] },
};
