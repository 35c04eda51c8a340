// The codec's header lists, flat `[name, value, ...]` with names in lower case: the one lookup every user of them needs.

/** The first value of `name` in a flat list, or undefined. */
export function fieldValue(fields: readonly string[], name: string): string | undefined {
  for (let index = 0; index < fields.length; index += 2) if (fields[index] === name) return fields[index + 1];
  return undefined;
}
