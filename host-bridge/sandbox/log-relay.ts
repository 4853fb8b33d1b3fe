// Relays a child's output into the bridge log (BACK-05..08). Threats: a backend printing a
// credential it was handed (masked by shape and by value), a backend writing terminal escapes
// that rewrite the owner's terminal or forge log lines (written as visible escapes), a chatty
// backend flooding the log (rate limited) or stalling on a full pipe (always drained).
import { StringDecoder } from "node:string_decoder";
import type { Readable } from "node:stream";

export type RelayLevel = "info" | "warning";
export type RelaySink = (level: RelayLevel, line: string) => void;

export interface LogRelayOptions {
  /** e.g. `app notes backend (pid 123)`; prefixed to every line. */
  tag: string;
  sink: RelaySink;
  /** Literal values masked wherever they appear (see credentialValuesOf). */
  secrets: readonly string[];
  burst?: number;
  perSecond?: number;
  keepLines?: number;
  /** A line longer than this is cut, so a child writing without newlines cannot grow memory. */
  maxLineChars?: number;
  now?: () => number;
}

const MASK = "***";

/** Shapes of credentials, each replaced whole or in the part that is secret. */
const SHAPES: Array<[RegExp, string | ((match: string, ...groups: string[]) => string)]> = [
  // Authorization: Bearer <token> / Basic <b64>
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, (_m, scheme: string) => `${scheme} ${MASK}`],
  // a login inside a URL: scheme://user:pass@host
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@:]+:[^\s/?#@]+@/gi, (_m, scheme: string) => `${scheme}${MASK}@`],
  // API keys with a vendor prefix: sk-..., sk_live_..., ghp_..., xoxb-..., AKIA...
  [/\b(?:sk|pk|rk)[-_](?:[A-Za-z0-9]+[-_])*[A-Za-z0-9]{16,}\b/g, MASK],
  [/\bgh[pousr]_[A-Za-z0-9]{20,}\b/g, MASK],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}\b/g, MASK],
  [/\bAKIA[0-9A-Z]{16}\b/g, MASK],
  // JWTs and `id.secret` session tokens
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, MASK],
  [/\b[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{20,}(?![A-Za-z0-9_.-])/g, (m) => (looksRandom(m.split(".")[1] ?? "") ? MASK : m)],
  // long hex keys (a 256-bit secret is 64 hex digits)
  [/\b[0-9a-fA-F]{32,}\b/g, MASK],
  // long base64 keys: only when the run looks random (mixed case and digits), so words and paths survive
  [/(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{40,}={0,2}(?![A-Za-z0-9+/=_-])/g, (m) => (looksRandom(m) && !looksLikePath(m) ? MASK : m)],
];

function looksRandom(s: string): boolean {
  return /[a-z]/.test(s) && /[A-Z]/.test(s) && /[0-9]/.test(s);
}

function looksLikePath(s: string): boolean {
  return s.includes("/") && s.split("/").every((part) => part.length < 24);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Masks credential values and shapes in one line. */
export function maskLine(line: string, secrets: readonly string[]): string {
  let out = line;
  for (const value of secrets) {
    if (value.length < 8) continue;
    out = out.replace(new RegExp(escapeRegExp(value), "g"), MASK);
  }
  for (const [pattern, replacement] of SHAPES) {
    out = out.replace(pattern, replacement as (substring: string, ...args: string[]) => string);
  }
  return out;
}

/**
 * Writes control characters as visible escapes: C0 (ESC becomes `\x1b`), DEL, C1 and the
 * bidirectional overrides that reorder what a reader sees. Tab stays a tab.
 */
export function escapeControls(line: string): string {
  return line.replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (ch) => {
    const code = ch.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

export interface LogRelay {
  /** Reads a stream to its end, relaying each line at `level`. Never pauses the stream. */
  attach(stream: Readable, level: RelayLevel): void;
  /** The last lines, masked and escaped (all lines, including ones the rate limit dropped). */
  lastLines(): string[];
  /** Lines the rate limit dropped so far. */
  dropped(): number;
  /** Resolves when every attached stream has ended; emits any trailing partial line and the drop note. */
  finished(): Promise<void>;
  /** Renames the tag, e.g. once the pid is known. */
  setTag(tag: string): void;
}

/** Creates the relay for one process: one rate limit shared by its stdout and stderr. */
export function createLogRelay(opts: LogRelayOptions): LogRelay {
  const burst = opts.burst ?? 200;
  const perSecond = opts.perSecond ?? 2;
  const keep = opts.keepLines ?? 40;
  const maxChars = opts.maxLineChars ?? 8192;
  const now = opts.now ?? Date.now;
  let tag = opts.tag;
  let tokens = burst;
  let lastRefill = now();
  let droppedTotal = 0;
  let droppedSinceNote = 0;
  let noteTimer: NodeJS.Timeout | null = null;
  const recent: string[] = [];
  const ends: Array<Promise<void>> = [];

  function take(): boolean {
    const t = now();
    tokens = Math.min(burst, tokens + ((t - lastRefill) / 1000) * perSecond);
    lastRefill = t;
    if (tokens >= 1) {
      tokens -= 1;
      return true;
    }
    return false;
  }

  function noteDrops(): void {
    if (noteTimer) clearTimeout(noteTimer);
    noteTimer = null;
    if (droppedSinceNote === 0) return;
    opts.sink("warning", `${tag}: ${droppedSinceNote} line(s) dropped by the log rate limit (${burst} burst, then ${perSecond}/s)`);
    droppedSinceNote = 0;
  }

  function emit(level: RelayLevel, raw: string): void {
    const line = escapeControls(maskLine(raw, opts.secrets));
    recent.push(line);
    if (recent.length > keep) recent.shift();
    if (!take()) {
      droppedTotal += 1;
      droppedSinceNote += 1;
      // A flood that then goes quiet still gets its note, one second later.
      if (!noteTimer) {
        noteTimer = setTimeout(noteDrops, 1000);
        noteTimer.unref();
      }
      return;
    }
    noteDrops();
    opts.sink(level, `${tag}: ${line}`);
  }

  return {
    attach(stream, level) {
      const decoder = new StringDecoder("utf8");
      let pending = "";
      const push = (text: string) => {
        pending += text;
        let nl: number;
        while ((nl = pending.indexOf("\n")) !== -1) {
          let line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          if (line.endsWith("\r")) line = line.slice(0, -1);
          emit(level, line);
        }
        while (pending.length > maxChars) {
          emit(level, `${pending.slice(0, maxChars)} [line cut at ${maxChars} characters]`);
          pending = pending.slice(maxChars);
        }
      };
      ends.push(
        new Promise<void>((resolve) => {
          // 'data' keeps the stream flowing: the pipe is read as fast as the child writes.
          stream.on("data", (chunk: Buffer | string) => push(typeof chunk === "string" ? chunk : decoder.write(chunk)));
          let done = false;
          const finish = () => {
            if (done) return;
            done = true;
            push(decoder.end());
            if (pending.length > 0) emit(level, pending);
            pending = "";
            resolve();
          };
          stream.once("end", finish);
          stream.once("error", finish);
          stream.once("close", finish);
        }),
      );
    },
    lastLines: () => [...recent],
    dropped: () => droppedTotal,
    async finished() {
      await Promise.all(ends);
      noteDrops();
    },
    setTag(next) {
      tag = next;
    },
  };
}
