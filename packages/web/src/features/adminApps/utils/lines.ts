/** "a, b\nc,,b " → ["a", "b", "c"]: trimmed, no blanks, no repeats, in the order typed. */
export function parseList(text: string): string[] {
  return [
    ...new Set(
      text
        .split(/[,\n]/)
        .map((item) => item.trim())
        .filter(Boolean),
    ),
  ];
}

/** Lines of text, trimmed, without blank lines. */
export function parseLines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}
