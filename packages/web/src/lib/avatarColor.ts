/**
 * Avatar backgrounds that white initials read on at 4.5:1 or more (WCAG AA), shade 9 of Mantine's
 * palette where it passes (its orange, yellow, lime and green do not). Mantine's `color="initials"`
 * picks from all of them, so some avatars fell below.
 */
export const AVATAR_COLORS = ['#1864ab', '#364fc7', '#5f3dc4', '#862e9c', '#a61e4d', '#c92a2a', '#087f5b', '#0b7285', '#495057'] as const;

/** The same colour for the same name every time (a small string hash), from the palette above. */
export function avatarColor(name: string): string {
  let hash = 0;
  for (const char of name) hash = (hash * 31 + (char.codePointAt(0) ?? 0)) >>> 0;
  return AVATAR_COLORS[hash % AVATAR_COLORS.length] ?? AVATAR_COLORS[0];
}

/** WCAG 2 contrast ratio of two `#rrggbb` colours. */
export function contrastRatio(a: string, b: string): number {
  const luminance = (hex: string) => {
    const [r, g, b] = [1, 3, 5].map((at) => {
      const channel = parseInt(hex.slice(at, at + 2), 16) / 255;
      return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
    }) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}
