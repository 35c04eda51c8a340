// `--proc-root`: a directory that does not exist at start is a typo, refused (exit 2); only a table unreadable later fails open.
import { statSync } from "node:fs";
import { errorCode, usageError } from "../errors.js";

/**
 * The directory the socket tables are read under, checked once at start. A missing one (or a
 * file) would otherwise turn every listener check into "not enforced" for good, silently: that
 * is refused here. Any other stat failure (EACCES, say) is left to the scan, which fails open and
 * logs it, as for a table that cannot be read.
 */
export function parseProcRoot(input: string, text: string): string {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(text).isDirectory();
  } catch (error) {
    const code = errorCode(error);
    if (code !== "ENOENT" && code !== "ENOTDIR") return text;
    throw usageError(input, `expected an existing directory (${code})`, text);
  }
  if (!isDirectory) throw usageError(input, "expected an existing directory (not a directory)", text);
  return text;
}
