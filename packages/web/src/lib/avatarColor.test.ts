import { describe, expect, it } from 'vitest';
import { AVATAR_COLORS, avatarColor, contrastRatio } from './avatarColor';

describe('avatarColor', () => {
  it('every colour carries white initials at 4.5:1 or more', () => {
    for (const color of AVATAR_COLORS) expect(contrastRatio(color, '#ffffff')).toBeGreaterThanOrEqual(4.5);
    // The check itself tells a failing colour: Mantine's orange.9 with white is about 4.1:1.
    expect(contrastRatio('#d9480f', '#ffffff')).toBeLessThan(4.5);
  });
  it('gives a name the same colour every time, spread over the palette', () => {
    expect(avatarColor('Whoami')).toBe(avatarColor('Whoami'));
    const used = new Set(['Whoami', 'Admin demo', 'Reports', 'Wiki', 'Grafana', 'Mail', 'Files', 'Chat'].map(avatarColor));
    expect(used.size).toBeGreaterThan(3);
    for (const color of used) expect(AVATAR_COLORS).toContain(color);
  });
});
