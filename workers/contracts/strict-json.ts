// Request bodies are parsed strictly: a duplicate key could make two readers of one body
// disagree (the first value vouched for, the last one used), and a `__proto__` or
// `constructor` key is how a later merge gets tricked into altering a prototype.

const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

export type StrictJsonResult = { ok: true; value: unknown } | { ok: false; reason: string };

/** Parses JSON text, refusing duplicate keys and prototype-altering keys at any depth. */
export function parseStrictJson(text: string): StrictJsonResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: "the body is not valid JSON" };
  }
  const problem = findKeyProblem(text);
  return problem ? { ok: false, reason: problem } : { ok: true, value };
}

// Walks the already-validated JSON text once, tracking the keys of each open object.
function findKeyProblem(text: string): string | null {
  const stack: Array<Set<string> | null> = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      const end = endOfString(text, i);
      const top = stack[stack.length - 1];
      if (expectKey && top) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (FORBIDDEN_KEYS.has(key)) return `the key '${key}' is not allowed`;
        if (top.has(key)) return `the key '${key}' appears twice in one object`;
        top.add(key);
        expectKey = false;
      }
      i = end;
    } else if (ch === "{") {
      stack.push(new Set());
      expectKey = true;
    } else if (ch === "[") {
      stack.push(null);
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
