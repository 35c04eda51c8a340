// Reason phrases for the statuses the relay writes itself (node:http's table lives in a module we no longer load).

const REASONS: Readonly<Record<number, string>> = {
  100: "Continue",
  101: "Switching Protocols",
  200: "OK",
  204: "No Content",
  304: "Not Modified",
  400: "Bad Request",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  413: "Payload Too Large",
  417: "Expectation Failed",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  505: "HTTP Version Not Supported",
};

/** The reason phrase for `status`; an upstream's own phrase is relayed as sent instead. */
export function statusText(status: number): string {
  return REASONS[status] ?? "Unknown";
}
