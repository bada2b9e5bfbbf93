import { z } from 'zod';

/**
 * Durations in config are written the way operators think of them ("90s", "15m", "12h", "7d")
 * and stored in milliseconds. A bare number is read as seconds.
 */
const UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/;

export function parseDuration(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value * 1000 : undefined;
  const match = DURATION.exec(value.trim());
  if (!match) return undefined;
  const [, amount, unit] = match;
  return Math.round(Number(amount) * UNITS[unit!]!);
}

/** A duration such as "15m" or "12h" (a bare number is seconds), parsed to milliseconds; zero is refused. */
export const durationSchema = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const ms = parseDuration(value);
  if (ms === undefined || ms <= 0) {
    ctx.addIssue({ code: 'custom', message: `"${value}" is not a duration such as 90s, 15m, 12h or 7d` });
    return z.NEVER;
  }
  return ms;
});
