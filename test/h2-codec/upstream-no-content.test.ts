// The codec's client side on responses without content (RFC 9110 §6.4.1, §8.6, RFC 9113 §8.1.1): a HEAD's or a 304's content-length is not a promise of DATA, DATA on a HEAD, 204 or 304 never reaches the user, nor a 1xx with a content-length; as nghttp2 does.
import t from "tap";
import { FLAG, FRAME, frame, headerBlock, settingsFrame } from "../relay/http2/h2-frames.js";
import { ScriptedApp } from "./upstream-app.js";
import { runClient, startCodecClient, startNodeClient } from "./upstream-clients.js";
import type { Method } from "./upstream-script.js";

const BOUND_MS = 2000;
const PROTOCOL_ERROR = 1;

type Fields = [string, string][];
const block = (fields: Fields) => headerBlock(fields.map(([name, value]) => ({ name, value })));

/** The app's bytes: its SETTINGS, a 1xx head if any, a response head on stream 1, then `data` (END_STREAM on the last frame). */
function response(fields: Fields, data: string | undefined, interim: Fields | undefined): Buffer[] {
  const early = interim === undefined ? [] : [frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, block(interim))];
  const head = frame(FRAME.HEADERS, FLAG.END_HEADERS | (data === undefined ? FLAG.END_STREAM : 0), 1, block(fields));
  const body = data === undefined ? [] : [frame(FRAME.DATA, FLAG.END_STREAM, 1, Buffer.from(data))];
  return [Buffer.concat([settingsFrame([]), ...early, head, ...body])];
}

const CASES: { name: string; method: Method; fields: Fields; data?: string; interim?: Fields; delivered: boolean }[] = [
  { name: "a HEAD's 200 with the GET's content-length", method: "HEAD", fields: [[":status", "200"], ["content-length", "1234"]], delivered: true },
  { name: "a 304 with the 200's content-length", method: "GET", fields: [[":status", "304"], ["content-length", "1234"]], delivered: true },
  { name: "a 204 with content-length 0", method: "GET", fields: [[":status", "204"], ["content-length", "0"]], delivered: true },
  { name: "a HEAD's 200 with DATA", method: "HEAD", fields: [[":status", "200"]], data: "body", delivered: false },
  { name: "a HEAD's 200 with DATA its content-length allows", method: "HEAD", fields: [[":status", "200"], ["content-length", "4"]], data: "body", delivered: false },
  { name: "a 204 with DATA", method: "GET", fields: [[":status", "204"]], data: "body", delivered: false },
  { name: "a 304 with DATA", method: "GET", fields: [[":status", "304"]], data: "body", delivered: false },
  { name: "a 204 with content-length 4", method: "GET", fields: [[":status", "204"], ["content-length", "4"]], delivered: false },
  // nghttp2 lets a 204's content-length be "0" alone (RFC 9110 §8.6 forbids any; servers send that one).
  { name: "a 204 with content-length 00", method: "GET", fields: [[":status", "204"], ["content-length", "00"]], delivered: false },
  // RFC 9110 §8.6: no content-length in a 1xx; nghttp2 resets the stream before its user hears of the 1xx.
  { name: "a 103 with a content-length", method: "GET", interim: [[":status", "103"], ["content-length", "5"]], fields: [[":status", "200"]], delivered: false },
];

t.test("responses without content reach the codec's user as they reach nghttp2's", async (t) => {
  const app = await ScriptedApp.start();
  t.teardown(() => app.close());
  for (const c of CASES) {
    const pieces = response(c.fields, c.data, c.interim);
    const ours = await runClient(app, pieces, [c.method], startCodecClient, BOUND_MS);
    const theirs = await runClient(app, pieces, [c.method], startNodeClient, BOUND_MS);
    const stream = ours.user.streams.get(1)!;
    const oracle = theirs.user.streams.get(1)!;
    t.equal(oracle.head !== undefined && oracle.ended && oracle.reset === undefined, c.delivered, `${c.name}: nghttp2 ${c.delivered ? "delivers it" : "refuses it"}`);
    if (c.delivered) {
      t.same({ head: stream.head, body: Buffer.concat(stream.body).length, ended: stream.ended, reset: stream.reset }, { head: c.fields.flat(), body: 0, ended: true, reset: undefined }, `${c.name}: the codec delivers it, without content`);
    } else {
      t.same({ interim: stream.interim.length, body: Buffer.concat(stream.body).length, ended: stream.ended, reset: stream.reset, sent: ours.wire.resets.get(1) }, { interim: 0, body: 0, ended: false, reset: PROTOCOL_ERROR, sent: [PROTOCOL_ERROR] }, `${c.name}: the codec resets the stream, PROTOCOL_ERROR, and its user gets no content`);
    }
  }
});
