// The cap on what a confined MCP server may send in one message (mcp.max_answer_bytes): its
// stdout is cut into lines (the stdio transport's framing) and a line that grows past the cap
// is dropped as it streams, never buffered whole, so a server cannot flood the agent or this
// process. When the dropped line was an answer whose id can be read from its beginning, the
// request it answered gets an error in its place, so the call fails at once with a stable code.
import { Transform, type TransformCallback } from "node:stream";

/** The JSON-RPC error code of a refusal by PersonalClaw (the server-defined range). */
export const REFUSED_BY_GATEWAY = -32003;
/** How much of a dropped line is kept to find its id. */
const ID_PREFIX_BYTES = 4096;

/**
 * The top-level `"id"` of a JSON object whose text begins with `prefix`, or undefined. Keys of
 * nested objects (a result holding an "id" of its own) are passed over: only depth 1 counts.
 */
export function topLevelId(prefix: string): string | number | undefined {
  let depth = 0;
  let i = 0;
  while (i < prefix.length) {
    const ch = prefix[i]!;
    if (ch === '"') {
      const end = stringEnd(prefix, i);
      if (end < 0) return undefined;
      const isIdKey = depth === 1 && prefix.slice(i, end + 1) === '"id"' && /^\s*:/.test(prefix.slice(end + 1));
      i = end + 1;
      if (isIdKey) return idValue(prefix.slice(i).replace(/^\s*:\s*/, ""));
      continue;
    }
    if (ch === "{" || ch === "[") depth++;
    else if (ch === "}" || ch === "]") depth--;
    i++;
  }
  return undefined;
}

function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}

function idValue(text: string): string | number | undefined {
  const number = /^-?\d{1,15}(?=\s*[,}])/.exec(text);
  if (number) return Number(number[0]);
  if (text.startsWith('"')) {
    const end = stringEnd(text, 0);
    if (end > 0) return JSON.parse(text.slice(0, end + 1)) as string;
  }
  return undefined;
}

/**
 * A stream that passes the server's lines on, each at most `maxBytes`; a longer one is dropped
 * and, when its id is readable, replaced by an error answer for it. `onDropped` is told each
 * drop (the id, or null when none could be read: its request then ends at the call timeout).
 */
export function capAnswers(maxBytes: number, onDropped: (id: string | number | null) => void): Transform {
  let parts: Buffer[] = [];
  let size = 0;
  let dropping = false;
  let prefix = "";
  const endLine = (stream: Transform) => {
    if (dropping) {
      const id = topLevelId(prefix) ?? null;
      onDropped(id);
      if (id !== null) stream.push(`${JSON.stringify(tooLarge(id, maxBytes))}\n`);
    } else stream.push(Buffer.concat([...parts, Buffer.from("\n")]));
    parts = [];
    size = 0;
    dropping = false;
    prefix = "";
  };
  const take = (piece: Buffer) => {
    if (piece.length === 0) return;
    if (!dropping && size + piece.length > maxBytes) {
      dropping = true;
      prefix = Buffer.concat([...parts, piece])
        .subarray(0, ID_PREFIX_BYTES)
        .toString("utf8");
      parts = [];
    }
    if (!dropping) parts.push(piece);
    size += piece.length;
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      let start = 0;
      for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
        take(chunk.subarray(start, nl));
        endLine(this);
        start = nl + 1;
      }
      take(chunk.subarray(start));
      done();
    },
  });
}

/** The error answer that stands in for a dropped one. */
function tooLarge(id: string | number, maxBytes: number) {
  return {
    jsonrpc: "2.0",
    id,
    error: {
      code: REFUSED_BY_GATEWAY,
      message: `The server's answer was larger than ${maxBytes} bytes (mcp.max_answer_bytes) and was dropped.`,
      data: { code: "mcp_tool_answer_too_large" },
    },
  };
}
