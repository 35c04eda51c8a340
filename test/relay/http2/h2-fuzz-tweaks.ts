// The h2 frame fuzz's hostile changes to a request: malformed fields and pseudo-headers, fields nghttp2 drops, odd but valid requests, the proxy's own paths, header lists around the limit.
import fc from "fast-check";
import type { HeaderField } from "./h2-frames.js";

/**
 * Hostile changes: malformed requests of RFC 9113 §8.1.1 and §8.2 (uppercase names,
 * connection-specific fields, `te` other than trailers, CR/LF/NUL, pseudo-header errors, a
 * content-length nghttp2 cannot read), fields nghttp2 drops, odd but valid requests, what the
 * proxy answers itself, and header lists around the 16 KiB limit. What each makes of the request
 * is judged from the finished draft (h2-fuzz-streams.ts), so that two cannot undo each other unseen.
 */
const TWEAKS = [
  "uppercase-name", "connection-specific", "te-not-trailers", "bad-pseudo-value", "duplicate-pseudo", "missing-pseudo", "pseudo-after-regular", "unknown-pseudo",
  "duplicate-host", "bad-content-length", "forbidden-value", "bad-name", "edge-value", "custom-method", "odd-authority", "host-not-authority", "host-and-authority",
  "te-trailers", "cookies", "forwarded", "hop-by-hop", "local", "big-list", "huge-list", "many-pairs",
] as const;
export type Tweak = { readonly kind: (typeof TWEAKS)[number]; readonly pick: number };
export const tweak: fc.Arbitrary<Tweak> = fc.record({ kind: fc.constantFrom(...TWEAKS), pick: fc.nat() });

const choose = <T>(options: readonly T[], pick: number): T => options[pick % options.length]!;

/** A request being built: pseudo-headers, then fields, in order. */
export interface Draft {
  pseudo: HeaderField[];
  /** `maybe`: nghttp2 may drop it; `dropped`: nghttp2 drops it; `kept`: the rest, judged by name. */
  regular: Array<HeaderField & { readonly role: "kept" | "maybe" | "dropped" }>;
  /** The tweaks applied, in order. */
  notes: string[];
}

/** Applies one tweak to the draft. */
export function applyTweak(draft: Draft, { kind, pick }: Tweak): void {
  const pseudo = (name: string) => draft.pseudo.find((field) => field.name === name);
  const setPseudo = (name: string, value: string) => {
    const index = draft.pseudo.findIndex((field) => field.name === name);
    if (index >= 0) draft.pseudo[index] = { name, value };
    else draft.pseudo.push({ name, value });
  };
  const add = (name: string, value: string, role: "kept" | "maybe" | "dropped" = "kept"): void => {
    draft.regular.splice(pick % (draft.regular.length + 1), 0, { name, value, role });
  };
  draft.notes.push(kind);
  switch (kind) {
    case "uppercase-name":
      return add(choose(["X-Upper", "Accept", "x-A", "USER-AGENT"], pick), "1");
    case "connection-specific":
      return add(...choose<[string, string]>([["connection", "close"], ["keep-alive", "5"], ["proxy-connection", "keep-alive"], ["transfer-encoding", "chunked"], ["upgrade", "h2c"]], pick));
    case "te-not-trailers":
      return add("te", choose(["gzip", "trailers, gzip", "", "chunked"], pick));
    case "bad-pseudo-value":
      return setPseudo(
        ...choose<[string, string]>(
          [[":path", "/a b"], [":path", "/a HTTP/1.1\r\nX-Smuggled: y"], [":path", "/a\0b"], [":path", "/caf\xe9"], [":path", "/a\x7f"], [":path", ""], [":path", " /a"], [":path", "/a\t"],
            [":method", "GET /x"], [":method", "G\rT"], [":method", ""], [":method", "GET\0"], [":method", "GE T"], [":authority", "a b"], [":authority", "a\r\nX-Smuggled: y"], [":authority", "a\0"], [":authority", " a"]],
          pick,
        ),
      );
    case "duplicate-pseudo": {
      const name = choose([":method", ":path", ":scheme", ":authority"], pick);
      return void draft.pseudo.splice(pick % (draft.pseudo.length + 1), 0, { name, value: choose([pseudo(name)?.value ?? "x", "/other", "POST", "https"], pick >> 2) });
    }
    case "missing-pseudo":
      return void (draft.pseudo = draft.pseudo.filter((field) => field.name !== choose([":method", ":path", ":scheme"], pick)));
    case "pseudo-after-regular":
      return void draft.regular.push({ name: choose([":path", ":authority", ":scheme"], pick), value: "/late", role: "kept" });
    case "unknown-pseudo":
      return void draft.pseudo.push(choose<HeaderField>([{ name: ":foo", value: "bar" }, { name: ":status", value: "200" }, { name: ":protocol", value: "websocket" }], pick));
    case "duplicate-host":
      draft.pseudo = draft.pseudo.filter((field) => field.name !== ":authority");
      add("host", "app.example");
      return add("host", choose(["app.example", "other.example"], pick));
    case "bad-content-length":
      add("content-length", choose(["abc", "-1", "+1", "0x1", ""], pick));
      return pick % 2 === 0 ? add("content-length", "1") : undefined;
    case "forbidden-value":
      return add(choose(["x-bad", "accept", "x-a"], pick), choose(["a\rb", "a\nb", "a\0b", "a\r\nx-injected: 1", "\r\n", "a\x01", "a\x7fb", "\x1b[0m"], pick >> 2), "dropped");
    case "bad-name":
      return add(choose(["x y", "x:y", "x\x01", "x@y", 'x"y', "x\r\ny", "", "x\0"], pick), "1", "dropped");
    case "edge-value":
      return add(choose(["x-edge", "accept"], pick), choose([" a", "a ", "\ta", "a\t", "caf\xe9", "\xff", " ", "\x80\x81"], pick >> 1), "maybe");
    case "custom-method":
      return setPseudo(":method", choose(["FOO", "get", "M-SEARCH", "PRI", "PROPFIND", "PURGE", "X.Y_Z!"], pick));
    case "odd-authority":
      return setPseudo(":authority", choose(["user@app.example", "a:b:c", "%41", "[v1.x]", "a_b", ""], pick));
    case "host-not-authority":
      draft.pseudo = draft.pseudo.filter((field) => field.name !== ":authority");
      return pick % 3 === 0 ? undefined : add("host", choose(["app.example", "host.example:81"], pick));
    case "host-and-authority":
      return add("host", choose([pseudo(":authority")?.value ?? "x", "other.example"], pick));
    case "te-trailers":
      return add("te", choose(["trailers", "Trailers", "TRAILERS"], pick));
    case "cookies":
      add("cookie", choose(["a=1", "b=2; c=3"], pick));
      return add("cookie", choose(["d=4", "e=5"], pick >> 1));
    case "forwarded":
      return add(choose(["x-forwarded-for", "x-forwarded-proto", "x-forwarded-host"], pick), choose(["203.0.113.7", "10.0.0.1, 10.0.0.2", "https", "edge.example"], pick >> 2));
    case "hop-by-hop":
      return add(choose(["trailer", "expect", "http2-settings"], pick), choose(["x-sum", "100-continue", "AAMAAABkAAQAAP__"], pick));
    case "local":
      if (pick % 3 === 0) return add("content-type", choose(["application/grpc", "application/grpc+proto"], pick));
      setPseudo(":method", choose(["GET", "HEAD", "OPTIONS"], pick));
      return setPseudo(":path", choose(["/health", "/healthz", "/readyz", "/readyz?verbose", "/healthz?x=1", "*", "x", "http://a/"], pick >> 2));
    case "big-list":
      for (let index = 0; index < 24; index++) add(`x-big-${index}`, "b".repeat(300 + (pick % 50)));
      return;
    case "huge-list":
      for (let index = 0; index < 24; index++) add(`x-huge-${index}`, "h".repeat(800 + (pick % 400)));
      return;
    case "many-pairs":
      for (let index = 0; index < 150 + (pick % 60); index++) add(`x-p${index}`, "1");
      return;
  }
}

