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

/** `a[i][field] / b[i][field]` for each round i: two runs made next to each other. */
export function perRound(a, b, field) {
  return a.map((run, round) => run[field] / b[round][field]);
}

/** "1.02x, 0.98x, 1.10x; median 1.02x". */
export function ratioList(ratios) {
  return `${ratios.map((ratio) => `${ratio.toFixed(2)}x`).join(", ")}; median ${median(ratios).toFixed(2)}x`;
}
