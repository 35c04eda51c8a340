// The Date field's value for answers of either protocol, formatted at most once a second.

let dateSecond = -1;
let dateText = "";

/** The Date header's value, formatted at most once a second (as node:http caches it). */
export function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}
