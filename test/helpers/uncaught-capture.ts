// While an in-process daemon is fuzzed, an uncaught exception is a finding of the case that caused it (with its bytes), not the end of the run: taken into a list while the run lasts, tap's own handlers back after.
export async function takingUncaught<T>(sink: Error[], run: () => Promise<T>): Promise<T> {
  const runnersHandlers = process.rawListeners("uncaughtException") as NodeJS.UncaughtExceptionListener[];
  const take = (error: Error) => sink.push(error);
  process.removeAllListeners("uncaughtException");
  process.on("uncaughtException", take);
  try {
    return await run();
  } finally {
    process.off("uncaughtException", take);
    for (const handler of runnersHandlers) process.on("uncaughtException", handler);
  }
}
