// A FrameVisitor that writes down what the frame reader hands on, DATA pieces of a stream joined, so readings of differently split input compare equal.
import type { FrameVisitor } from "../../src/h2-codec/frame-reader.js";

/** One event as recorded: the kind, the stream and the frame's facts as plain values. */
export type FrameEvent = readonly [kind: string, streamId: number, ...facts: (string | number | boolean)[]];

/** Records every callback; consecutive DATA pieces on one stream are joined (the split of a frame into pieces depends on the reads). */
export class FrameLog implements FrameVisitor {
  readonly events: FrameEvent[] = [];

  onData(streamId: number, source: Buffer, start: number, end: number, endStream: boolean, flowControlled: number): void {
    const data = source.subarray(start, end);
    const last = this.events.at(-1);
    if (last !== undefined && last[0] === "data" && last[1] === streamId && last[3] === false) {
      this.events[this.events.length - 1] = ["data", streamId, (last[2] as string) + data.toString("hex"), endStream, (last[4] as number) + flowControlled];
      return;
    }
    this.events.push(["data", streamId, data.toString("hex"), endStream, flowControlled]);
  }
  onHeaders(streamId: number, source: Buffer, start: number, end: number, endStream: boolean, dependsOn: number): void {
    this.events.push(["headers", streamId, source.toString("hex", start, end), endStream, dependsOn]);
  }
  onPriority(streamId: number, dependsOn: number): void {
    this.events.push(["priority", streamId, dependsOn]);
  }
  onRstStream(streamId: number, errorCode: number): void {
    this.events.push(["rst", streamId, errorCode]);
  }
  onSettings(entries: Buffer): void {
    this.events.push(["settings", 0, entries.toString("hex")]);
  }
  onSettingsAck(): void {
    this.events.push(["settings-ack", 0]);
  }
  onPing(opaque: Buffer, ack: boolean): void {
    this.events.push(["ping", 0, opaque.toString("hex"), ack]);
  }
  onGoaway(lastStreamId: number, errorCode: number, debug: Buffer): void {
    this.events.push(["goaway", 0, lastStreamId, errorCode, debug.toString("hex")]);
  }
  onWindowUpdate(streamId: number, increment: number): void {
    this.events.push(["window-update", streamId, increment]);
  }
  onUnknownFrame(type: number, streamId: number, length: number): void {
    this.events.push(["unknown", streamId, type, length]);
  }
}
