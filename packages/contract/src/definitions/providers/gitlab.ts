import { z } from 'zod';
import { baseUrl, checkOidc, claimMappingWith, oidcFields, scopesWith, withCreateUsers } from './common.js';
import type { ProviderKindPreset } from './preset.js';

export const GITLAB_COM = 'https://gitlab.com';
/** The prefix gitlab.com's groups count under unless another is chosen (never none). */
export const GITLAB_COM_GROUP_PREFIX = 'gitlab:';

/**
 * GitLab (gitlab.com or self-managed: `baseUrl`); the issuer is the base URL. Groups: GitLab's ID token
 * and userinfo carry `groups_direct` (the groups the person is a direct member of, full paths), and
 * userinfo `groups` (with their ancestors); the preset reads `groups_direct` by default.
 *
 * Threat: on gitlab.com, group paths are anyone's to create, so its groups count only prefixed
 * (`gitlab:acme/platform`); a self-managed GitLab's groups are the organisation's own, and count as
 * for any provider (trustGroups, or a groupPrefix).
 */
export const gitlabProviderSchema = z
  .object({
    ...oidcFields,
    kind: z.literal('gitlab'),
    baseUrl: baseUrl.default(GITLAB_COM),
    scopes: scopesWith(['openid', 'email', 'profile']),
    claims: claimMappingWith({ groups: 'groups_direct' }),
    issuer: z.string().optional(),
  })
  .strict()
  .superRefine((provider, ctx) => {
    checkOidc(provider, ctx);
    if (provider.issuer !== undefined && provider.issuer !== provider.baseUrl) {
      ctx.addIssue({ code: 'custom', path: ['issuer'], message: `is the baseUrl (${provider.baseUrl}): leave it out` });
    }
  })
  .transform(({ issuer: _given, ...provider }) =>
    withCreateUsers({ ...provider, issuer: provider.baseUrl, groupPrefix: provider.groupPrefix ?? (provider.baseUrl === GITLAB_COM ? GITLAB_COM_GROUP_PREFIX : undefined) }),
  );

export const gitlabPreset: ProviderKindPreset = {
  kind: 'gitlab',
  protocol: 'oidc',
  label: 'GitLab',
  description: 'GitLab.com or a self-managed GitLab; groups from groups_direct.',
  docs: 'docs/providers/gitlab.md',
  fields: [{ name: 'baseUrl', label: 'GitLab URL', help: 'https://gitlab.com, or your self-managed GitLab.', type: 'url', required: false, placeholder: GITLAB_COM }],
  // The form starts for gitlab.com; a self-managed GitLab's groups are its own (clear the prefix).
  defaults: { scopes: ['openid', 'email', 'profile'], claims: { groups: 'groups_direct' }, groupPrefix: GITLAB_COM_GROUP_PREFIX },
};
