export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spread(values: readonly number[]): Spread {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN };
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite) };
}

/** Nearest-rank percentile of an ascending array (p in 0–100). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

/** A growable array of doubles, cheap enough to record every response's latency. */
export class Samples {
  private data = new Float64Array(1 << 16);
  private length = 0;

  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = value;
  }

  get count(): number {
    return this.length;
  }

  sorted(): Float64Array {
    return this.data.slice(0, this.length).sort();
  }
}

export function fixed(value: number | undefined, digits: number): string {
  return value === undefined || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits);
}

export function thousands(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? 'n/a' : Math.round(value).toLocaleString('en-US');
}

/** Left-aligned first column, right-aligned others. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}
