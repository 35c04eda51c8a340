// An empty array that V8 already holds as an array of objects, for a list made before the warm-up that will hold objects.

/**
 * `[]` starts as an array of small integers in V8 and becomes an array of objects at its first
 * push; code compiled while the list's twins were in use (the warm-up's) checks for the latter,
 * so a list made before the warm-up and still empty deoptimises that code at its first client
 * ("wrong map": the upstream pool's `acquire` and its release). One element that is not a small
 * integer, popped at once, leaves it empty with the objects' elements kind.
 */
export function objectList<T extends object>(): T[] {
  const list: (T | undefined)[] = [undefined];
  list.pop();
  return list as T[];
}
