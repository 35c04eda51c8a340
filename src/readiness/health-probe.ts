// The contract every probed check's probe keeps (HTTP, gRPC, or a test's fake): what one ask returns.

/** One probe's outcome: `reason` is the short public text, `status` or `err` go to the log. */
export type ProbeOutcome =
  | { readonly ok: true; readonly status: number }
  | { readonly ok: false; readonly reason: string; readonly status?: number; readonly err?: string };

/** Asks once; never rejects, and settles within its timeout (HttpHealthProbe, GrpcHealthProbe, or a fake in tests). */
export interface HealthProbe {
  probe(): Promise<ProbeOutcome>;
  close(): Promise<void>;
}

