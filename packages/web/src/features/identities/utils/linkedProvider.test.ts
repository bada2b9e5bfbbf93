import type { MyIdentity } from '@gatehouse/contract';
import { describe, expect, it } from 'vitest';
import type { IdentitiesResponse } from '../api/getIdentities';
import { linkedProviderName } from './linkedProvider';

const identity = (providerId: string, name: string): MyIdentity => ({
  id: `i-${providerId}`,
  provider: { id: providerId, name },
  subject: 'sub',
  email: null,
  name: null,
  linkedAt: '2026-03-12T14:00:00.000Z',
  lastUsedAt: null,
  current: false,
  primary: false,
});

const data: IdentitiesResponse = {
  identities: [identity('dev', 'Development IdP'), identity('partner', 'Partner IdP')],
  linkable: [{ id: 'github', name: 'GitHub' }],
};

describe('linkedProviderName', () => {
  it('names a provider this account has an identity with', () => {
    expect(linkedProviderName('partner', data)).toBe('Partner IdP');
  });

  it('shows nothing for anything else in the URL: unknown ids, providers not linked, no data yet', () => {
    expect(linkedProviderName('<b>Your account is locked</b>', data)).toBeUndefined();
    expect(linkedProviderName('github', data)).toBeUndefined();
    expect(linkedProviderName(null, data)).toBeUndefined();
    expect(linkedProviderName('partner', undefined)).toBeUndefined();
  });
});
