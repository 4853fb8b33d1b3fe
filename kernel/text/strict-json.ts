// Request bodies and app manifests are parsed strictly: a duplicate key could make two readers
// of one document disagree (the first value vouched for, the last one used), a `__proto__` or
// `constructor` key is how a later merge gets tricked into altering a prototype, and nesting
// deeper than any real document needs is refused before a recursive reader overflows its stack.

const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** No body or manifest this gateway reads nests deeper than this. */
export const MAX_JSON_DEPTH = 64;

export type StrictJsonResult =
  | { ok: true; value: unknown }
  | { ok: false; reason: string; problem: "not_json" | "duplicate_key" | "forbidden_key" | "too_deep"; key?: string };

/** Parses JSON text, refusing duplicate keys, prototype-altering keys and deep nesting at any depth. */
export function parseStrictJson(text: string): StrictJsonResult {
  // Checked on the text first: JSON.parse itself is the recursive reader a deep document overflows.
  const problem = findKeyProblem(text);
  if (problem?.problem === "too_deep") return { ok: false, ...problem };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: "the body is not valid JSON", problem: "not_json" };
  }
  return problem ? { ok: false, ...problem } : { ok: true, value };
}

type KeyProblem = { reason: string; problem: "duplicate_key" | "forbidden_key" | "too_deep"; key?: string };

// Walks the JSON text once, tracking the keys of each open object. On text that is not JSON
// it may report nothing; JSON.parse then refuses it.
function findKeyProblem(text: string): KeyProblem | null {
  const stack: Array<Set<string> | null> = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      const end = endOfString(text, i);
      const top = stack[stack.length - 1];
      if (expectKey && top) {
        let key: string;
        try {
          key = JSON.parse(text.slice(i, end + 1)) as string;
        } catch {
          return null;
        }
        if (FORBIDDEN_KEYS.has(key))
          return { reason: `the key '${key}' is not allowed`, problem: "forbidden_key", key };
        if (top.has(key))
          return { reason: `the key '${key}' appears twice in one object`, problem: "duplicate_key", key };
        top.add(key);
        expectKey = false;
      }
      i = end;
    } else if (ch === "{" || ch === "[") {
      stack.push(ch === "{" ? new Set() : null);
      if (stack.length > MAX_JSON_DEPTH)
        return { reason: `it nests deeper than ${MAX_JSON_DEPTH} levels`, problem: "too_deep" };
      expectKey = ch === "{";
    } else if (ch === "}" || ch === "]") {
      stack.pop();
    } else if (ch === ",") {
      expectKey = stack[stack.length - 1] != null;
    }
  }
  return null;
}

function endOfString(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i;
  }
  return text.length - 1;
}
