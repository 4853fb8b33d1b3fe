// Relays a child's output into the bridge log (BACK-05..08). Threats: a backend printing a
// credential it was handed (masked by shape and by value), a backend writing terminal escapes
// that rewrite the owner's terminal or forge log lines (written as visible escapes), a chatty
// backend flooding the log (rate limited) or stalling on a full pipe (always drained).
import { StringDecoder } from "node:string_decoder";
import type { Readable } from "node:stream";
import {
  createLineMasker,
  cutsThroughWord,
  escapeControls,
  maskSafeCut,
  maskWordsAtCut,
} from "../../kernel/text/text-safety.js";

export type RelayLevel = "debug" | "info" | "warning" | "error";
export type RelaySink = (level: RelayLevel, line: string) => void;

/** Level words a logger writes near the start of its line, mapped to the bridge's levels. */
const LEVEL_WORDS: Record<string, RelayLevel> = {
  trace: "debug",
  debug: "debug",
  info: "info",
  notice: "info",
  warn: "warning",
  warning: "warning",
  error: "error",
  err: "error",
  critical: "error",
  fatal: "error",
};
/**
 * A level word as loggers write it, one of a line's first words: `[warn]`, `(info)`, `level=error`,
 * `ERROR`, `WARNING:root:`, or a lower-case word with a colon (`error:`); "no error found" is none.
 */
const LEVEL_TOKEN = /^(?:\[(\w+)\]|\((\w+)\)|<(\w+)>|level=(\w+)|([A-Z]{3,8})(?![A-Za-z])|([a-z]+):)/;
const LEVEL_TOKENS_READ = 3;
/** An uncaught error's first line: Python's traceback, Node's `TypeError: ...` or `Error [CODE]: ...`. */
const ERROR_START = /^(?:Traceback \(most recent call last\)|(?:[A-Z][A-Za-z]*)?Error(?: \[[A-Z_]+\])?: )/;

/**
 * The level a child's line says it is at (its logger's level word, or the start of an uncaught
 * error), else `fallback`: a stderr line is not a warning only because it went to stderr.
 */
export function levelOfLine(line: string, fallback: RelayLevel = "info"): RelayLevel {
  const text = line.trimStart();
  if (ERROR_START.test(text)) return "error";
  for (const token of text.split(/\s+/, LEVEL_TOKENS_READ)) {
    const word = LEVEL_TOKEN.exec(token)
      ?.slice(1)
      .find((group) => group !== undefined)
      ?.toLowerCase();
    const level = word === undefined ? undefined : LEVEL_WORDS[word];
    if (level) return level;
  }
  return fallback;
}

export interface LogRelayOptions {
  /** e.g. `app notes backend (pid 123)`; prefixed to every line. */
  tag: string;
  sink: RelaySink;
  /** Literal values masked wherever they appear (see credentialValuesOf); shapes are masked too. */
  secrets: readonly string[];
  burst?: number;
  perSecond?: number;
  keepLines?: number;
  /** A line longer than this is cut, so a child writing without newlines cannot grow memory. */
  maxLineChars?: number;
  now?: () => number;
}

export interface LogRelay {
  /**
   * Reads a stream to its end, relaying each line at `level`, or with "from-line" at the level
   * the line names (levelOfLine, else info). Never pauses the stream.
   */
  attach(stream: Readable, level: RelayLevel | "from-line"): void;
  /** The last lines, masked and escaped (all lines, including ones the rate limit dropped). */
  lastLines(): string[];
  /** Lines the rate limit dropped so far. */
  dropped(): number;
  /** Resolves when every attached stream has ended; emits any trailing partial line and the drop note. */
  finished(): Promise<void>;
  /** Renames the tag, e.g. once the pid is known. */
  setTag(tag: string): void;
}

/** Which ends of a piece cut a word through (that word is masked on that side). */
type WordCut = Readonly<{ leading: boolean; trailing: boolean }>;

const NO_WORD_CUT: WordCut = { leading: false, trailing: false };

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
  // One masker per relay: a private key block printed across lines is masked whole.
  const mask = createLineMasker(opts.secrets);
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
    opts.sink(
      "warning",
      `${tag}: ${droppedSinceNote} line(s) dropped by the log rate limit (${burst} burst, then ${perSecond}/s)`,
    );
    droppedSinceNote = 0;
  }

  /**
   * Relays one line or piece of one: masked by value and shape, then (a piece cut through a
   * word) that word masked on the side of each such cut, then its note appended.
   */
  function emit(level: RelayLevel, raw: string, cutWords = NO_WORD_CUT, note = ""): void {
    // Tabs stay (indented output); everything else unsafe, CR included, becomes a visible escape.
    const line = escapeControls(maskWordsAtCut(mask(raw), cutWords) + note, { keepLines: true });
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
      const lines = createLineSplitter(maxChars, opts.secrets, (piece, cutWords, note) =>
        emit(level === "from-line" ? levelOfLine(piece) : level, piece, cutWords, note),
      );
      ends.push(
        new Promise<void>((resolve) => {
          // 'data' keeps the stream flowing: the pipe is read as fast as the child writes.
          stream.on("data", (chunk: Buffer | string) =>
            lines.push(typeof chunk === "string" ? chunk : decoder.write(chunk)),
          );
          let done = false;
          const finish = () => {
            if (done) return;
            done = true;
            lines.push(decoder.end());
            lines.end();
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

/**
 * Splits one stream's text into lines and hands each to `emit`. A line longer than `maxChars`,
 * ended or not, is cut: never inside a secret, nor inside a word when the piece has a break; a
 * piece that is one word is cut at the limit and the word masked on both sides. Each piece is
 * masked on its own, and none is longer than the limit, so no masker runs over more than one
 * piece at a time.
 */
function createLineSplitter(
  maxChars: number,
  secrets: readonly string[],
  emit: (piece: string, cutWords: WordCut, note?: string) => void,
): { push(text: string): void; end(): void } {
  let pending = "";
  // The last cut went through a word: the word the rest begins with is masked too.
  let wordCut = false;
  return {
    push(text) {
      pending += text;
      for (;;) {
        const nl = pending.indexOf("\n");
        const lineEnd = nl === -1 ? pending.length : nl;
        if (lineEnd > maxChars) {
          const line = pending.slice(0, lineEnd);
          const cut = maskSafeCut(line, maxChars, secrets, nl !== -1);
          if (cut === null) break;
          // A handed-over value that spans the whole of an ended line: the line goes out whole, below.
          if (cut < line.length) {
            const leading = wordCut;
            wordCut = cutsThroughWord(line, cut);
            emit(line.slice(0, cut), { leading, trailing: wordCut }, ` [line cut at ${cut} characters]`);
            pending = pending.slice(cut);
            continue;
          }
        }
        if (nl === -1) break;
        let line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        if (line.endsWith("\r")) line = line.slice(0, -1);
        emit(line, { leading: wordCut, trailing: false });
        wordCut = false;
      }
    },
    /** The trailing partial line, if any. */
    end() {
      if (pending.length > 0) emit(pending, { leading: wordCut, trailing: false });
      pending = "";
    },
  };
}
