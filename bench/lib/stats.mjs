// Small statistics and formatting helpers for the benchmark tables.

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** "median (min-max)" with `digits` decimals. */
export function spread(values, digits = 0) {
  const format = (value) => value.toFixed(digits);
  return `${format(median(values))} (${format(Math.min(...values))}-${format(Math.max(...values))})`;
}

/** A markdown table from a header row and rows. */
export function table(header, rows) {
  const line = (cells) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}
