/** An instant as the API writes it (ISO 8601, UTC; the contract's `instant`), from epoch milliseconds. */
export const iso = (ms: number): string => new Date(ms).toISOString();

/** The same, for an instant that may not have happened (never signed in, never used). */
export const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));
