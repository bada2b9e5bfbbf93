import { describe, expect, it } from 'vitest';
import { presetMonogram } from './PresetPicker';

describe('a preset’s mark (initials, no image)', () => {
  it.each([
    ['OpenID Connect', 'OC'],
    ['Microsoft Entra ID', 'ME'],
    ['Google', 'G'],
    ['GitLab', 'GL'],
    ['Auth0', 'A'],
    ['keycloak', 'K'],
    ['', '?'],
  ])('%s → %s', (label, mark) => {
    expect(presetMonogram(label)).toBe(mark);
  });
});
