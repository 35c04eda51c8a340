// The honest clients beside soak-cgroup's idle phase: GET /small over a kept-alive HTTP/1.1 connection, over a new HTTP/1.1 connection each time (as a kubelet's probes), and over one h2c connection; each answer must be a whole 200.
import http from "node:http";
import http2 from "node:http2";

/** An answer not whole within this is a failed request. */
const ANSWER_TIMEOUT_MS = 10_000;
/** Between two requests of one client: a steady trickle, not a load of its own. */
const PAUSE_MS = 20;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One HTTP/1.1 GET: "ok", or what went wrong. */
function http1Get(port, path, bytes, agent) {
  return new Promise((resolve) => {
    const request = http.get({ host: "127.0.0.1", port, path, agent, timeout: ANSWER_TIMEOUT_MS }, (response) => {
      let received = 0;
      response.on("data", (chunk) => (received += chunk.length));
      response.on("end", () => resolve(response.statusCode === 200 && received === bytes ? "ok" : `status ${response.statusCode}, ${received} octets`));
      response.on("error", (error) => resolve(error.message));
    });
    request.on("timeout", () => request.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`)));
    request.on("error", (error) => resolve(error.message));
  });
}

/** One h2c GET on `session`: "ok", or what went wrong. */
function h2Get(session, path, bytes) {
  return new Promise((resolve) => {
    const stream = session.request({ ":path": path });
    let received = 0;
    let status = 0;
    const timer = setTimeout(() => stream.close(), ANSWER_TIMEOUT_MS);
    stream.on("response", (headers) => (status = Number(headers[":status"])));
    stream.on("data", (chunk) => (received += chunk.length));
    stream.on("error", () => {});
    stream.on("close", () => {
      clearTimeout(timer);
      resolve(status === 200 && received === bytes ? "ok" : `h2c: status ${status}, ${received} octets`);
    });
  });
}

/** Runs `get` until `signal`, counting. */
async function loop(signal, get) {
  let requests = 0;
  let errors = 0;
  let firstError;
  while (!signal.aborted) {
    const outcome = await get();
    requests++;
    if (outcome !== "ok") {
      errors++;
      firstError ??= outcome;
    }
    await sleep(PAUSE_MS);
  }
  return { requests, errors, firstError };
}

/** The three clients at once until `signal`: `{ requests, errors, note }` over all of them. */
export async function honestGets(port, signal, { path = "/small", bytes = 100 } = {}) {
  const keptAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let session;
  const h2Session = () => {
    if (session === undefined || session.destroyed || session.closed) {
      session = http2.connect(`http://127.0.0.1:${port}`);
      session.on("error", () => {});
    }
    return session;
  };
  try {
    const results = await Promise.all([
      loop(signal, () => http1Get(port, path, bytes, keptAlive)),
      loop(signal, () => http1Get(port, path, bytes, false)),
      loop(signal, () => h2Get(h2Session(), path, bytes)),
    ]);
    const firstError = results.find((result) => result.firstError !== undefined)?.firstError;
    return {
      requests: results.reduce((sum, result) => sum + result.requests, 0),
      errors: results.reduce((sum, result) => sum + result.errors, 0),
      note: firstError && `first failure: ${firstError}`,
    };
  } finally {
    keptAlive.destroy();
    session?.destroy();
  }
}
