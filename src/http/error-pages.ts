// Loads the branded error pages once at start-up: the embedded template (a SEA asset in the binary), or an operator's own files.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import * as sea from "node:sea";
import { errorCode, usageError } from "../errors.js";

/** Statuses the proxy itself answers with; any other falls back to the generic page. */
export const PROXY_ERRORS = {
  502: { title: "Upstream unavailable", message: "The service behind this address could not be reached. Try again in a moment." },
  // One page for every proxy-made 503: a replica not ready, shutting down, or too busy (overload).
  503: { title: "Temporarily unavailable", message: "This replica is not ready, is shutting down, or is too busy right now. Try again in a moment." },
  504: { title: "Upstream timeout", message: "The service behind this address took too long to answer. Try again in a moment." },
} as const;

export type ProxyErrorStatus = keyof typeof PROXY_ERRORS;

const GENERIC = { title: "Something went wrong", message: "The request could not be completed. Try again in a moment." };
const TEMPLATE_ASSET = "error-pages/error-page.html";
const REQUEST_ID = "{{requestId}}";

/** A page split around its request id placeholder, so serving it is a concatenation. */
export interface ErrorPage {
  readonly before: Buffer;
  readonly after: Buffer;
}

/** The page for each proxy status plus the fallback, as served. */
export interface ErrorPageSet {
  pageFor(status: number): ErrorPage;
}

/**
 * Reads the embedded template (from the SEA blob when running as the single binary, else from
 * the file beside this module or the bundle) and renders the four pages; then, if `dir` is
 * given, `502.html`, `503.html`, `504.html` and `error.html` there replace the rendered ones.
 * An unreadable `dir` is a usage error (exit 2); a missing file in it keeps the embedded page.
 */
export function loadErrorPages(dir: string | undefined): ErrorPageSet {
  const template = readEmbeddedTemplate();
  const pages = new Map<number | "error", ErrorPage>();
  for (const [status, text] of Object.entries(PROXY_ERRORS)) pages.set(Number(status), render(template, status, text));
  if (dir !== undefined) {
    for (const [key, html] of readOperatorPages(dir)) pages.set(key, splitAtRequestId(html));
  }
  const operatorFallback = pages.get("error");
  return {
    pageFor: (status) => {
      const page = pages.get(status) ?? operatorFallback;
      if (page) return page;
      // Any other status (an intercepted upstream 500) gets the generic text under its own code,
      // rendered once per code. Only 5xx codes reach here, so the map stays small.
      const rendered = render(template, String(status), GENERIC);
      pages.set(status, rendered);
      return rendered;
    },
  };
}

function readEmbeddedTemplate(): string {
  if (sea.isSea()) return sea.getAsset(TEMPLATE_ASSET, "utf8");
  // Beside the source module in development, beside dist/readiness-proxy.cjs in the bundle.
  return readFileSync(new URL(TEMPLATE_ASSET, pagesBaseUrl()), "utf8");
}

/** The bundle defines `import.meta.url` as its own file URL (see the Makefile's esbuild flags). */
function pagesBaseUrl(): URL {
  return new URL("./", import.meta.url);
}

function render(template: string, status: string, text: { title: string; message: string }): ErrorPage {
  const html = template
    .replaceAll("{{status}}", escapeHtml(status))
    .replaceAll("{{title}}", escapeHtml(text.title))
    .replaceAll("{{message}}", escapeHtml(text.message));
  return splitAtRequestId(html);
}

function splitAtRequestId(html: string): ErrorPage {
  const at = html.indexOf(REQUEST_ID);
  if (at < 0) return { before: Buffer.from(html), after: Buffer.alloc(0) };
  return { before: Buffer.from(html.slice(0, at)), after: Buffer.from(html.slice(at + REQUEST_ID.length)) };
}

function readOperatorPages(dir: string): Array<[number | "error", string]> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    throw usageError("--error-pages-dir", `expected a readable directory (${errorCode(error) ?? "unreadable"})`, dir);
  }
  const pages: Array<[number | "error", string]> = [];
  for (const key of [...Object.keys(PROXY_ERRORS).map(Number), "error" as const]) {
    const file = `${key}.html`;
    if (!names.includes(file)) continue;
    try {
      pages.push([key, readFileSync(join(dir, file), "utf8")]);
    } catch (error) {
      throw usageError("--error-pages-dir", `expected ${file} to be a readable file (${errorCode(error) ?? "unreadable"})`, dir);
    }
  }
  return pages;
}

/** Request ids are already restricted to [\w.:-], but a page must never trust what it embeds. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
