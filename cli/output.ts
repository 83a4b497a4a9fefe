// Output: aligned tables for people, --json for scripts.
export function table(rows: Record<string, unknown>[], columns: string[]): string {
  const cells = rows.map((r) => columns.map((c) => (r[c] === null || r[c] === undefined ? '' : String(r[c]))))
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i].length)))
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd()
  return [line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n')
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2)
}
