import { z } from 'zod';

/**
 * Sizes in config are written as operators write them ("64MB", "1.5GiB") and kept in bytes, as
 * durations are written "15m" and kept in milliseconds. kB, MB and GB are powers of 1000 and KiB, MiB
 * and GiB powers of 1024 (as Kubernetes reads them); the unit's case does not matter. A bare number is
 * bytes.
 */
const UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
};

const SIZE = /^(\d+(?:\.\d+)?)\s*([a-z]+)$/i;

export function parseByteSize(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  const match = SIZE.exec(value.trim());
  const unit = match && UNITS[match[2]!.toLowerCase()];
  if (!unit) return undefined;
  const bytes = Math.round(Number(match[1]) * unit);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** A size such as "256MB" (a bare number is bytes), parsed to bytes, of at least `min` bytes (`minText` says it in the message). */
export function byteSizeSchema(min: number, minText: string) {
  return z.union([z.string(), z.number()]).transform((value, ctx) => {
    const bytes = parseByteSize(value);
    if (bytes === undefined) {
      ctx.addIssue({ code: 'custom', message: `"${value}" is not a size such as 64MB, 512MiB or 1GB` });
      return z.NEVER;
    }
    if (bytes < min) {
      ctx.addIssue({ code: 'custom', message: `must be at least ${minText}` });
      return z.NEVER;
    }
    return bytes;
  });
}
