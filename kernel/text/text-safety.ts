// The one rule for showing third-party text: the CLI review, gateway.log (backend, hook and
// installer output), security-log rows, error messages built from child output. Threats: a
// credential printed back (masked by shape and by the exact values the caller knows), and
// bytes that rewrite what a reader sees — CR and ANSI sequences that overwrite a terminal
// line, C0/C1 controls, bidi overrides that reorder a line, invisible format characters —
// written as visible escapes instead. Shared by both runtimes: imports nothing.

/** What a masked credential becomes. */
export const MASK = "***";

/** A caller-supplied value shorter than this is ignored: masking it would shred the text. */
export const MIN_SECRET_CHARS = 4;

// --- escaping ------------------------------------------------------------------------

// Every control (C0, DEL, C1), every format character (bidi embeddings, overrides, isolates
// and marks, zero-width characters, soft hyphen, BOM, tag characters), the line and paragraph
// separators, lone surrogates, and the Hangul fillers and grapheme joiner that render as
// nothing: each lets a string look like something it is not.
const UNSAFE_CHARACTER = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\u034f\u115f\u1160\u3164\uffa0]/gu;

const NAMED_ESCAPES: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function visibleEscape(ch: string): string {
  const named = NAMED_ESCAPES[ch];
  if (named !== undefined) return named;
  const code = ch.codePointAt(0)!;
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, "0")}`;
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, "0")}`;
  return `\\u{${code.toString(16)}}`;
}

export interface EscapeOptions {
  /** Keep `\n` (and a tab) as they are, so a multi-line text keeps its lines; CR is always escaped. */
  keepLines?: boolean;
}

/**
 * Writes every unsafe character as a visible escape (`\x1b`, `\r`, `\u202e`, `\u{e0041}`).
 * By default the result is one line; with keepLines it keeps its newlines and tabs.
 * Idempotent: a backslash is left alone, so escaping twice changes nothing.
 */
export function escapeControls(text: string, options: EscapeOptions = {}): string {
  const keep = options.keepLines === true;
  return text.replace(UNSAFE_CHARACTER, (ch) => (keep && (ch === "\n" || ch === "\t") ? ch : visibleEscape(ch)));
}

// --- masking by shape ----------------------------------------------------------------

const PRIVATE_KEY_BEGIN = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----/;
const PRIVATE_KEY_END = /-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----/;
// A whole block, or an unterminated one to the end of the text.
const PRIVATE_KEY_BLOCK = new RegExp(`${PRIVATE_KEY_BEGIN.source}[\\s\\S]*?(?:${PRIVATE_KEY_END.source}|$)`, "g");

const HOST_AFTER_AT = /^[A-Za-z0-9.\-[\]]+(?::\d+)?(?:[/?#]|$)/;

/** Masks the login of every `scheme://user:pass@host` (and `scheme://token@host`), up to the last @ before the host. */
function maskUrlLogins(text: string): string {
  // A scheme starts only where a run of scheme characters does: a long run is scanned once, not once per character.
  return text.replace(
    /(?<![A-Za-z0-9+.-])([0-9+.-]*)([A-Za-z][A-Za-z0-9+.-]*:\/\/)(\S+)/g,
    (whole, lead: string, scheme: string, rest: string) => {
      const delimiter = rest.search(/[/?#]/);
      const authorityEnd = delimiter === -1 ? rest.length : delimiter;
      let at = rest.lastIndexOf("@", authorityEnd - 1);
      if (at === -1) {
        // A password holding '/', '?' or '#' cuts the authority short: then the login runs to
        // the last '@' that a host name follows, if the cut part looks like `user:...`.
        if (!/^[^@/?#]*:[^\d/?#]/.test(rest)) return whole;
        for (let i = rest.indexOf("@"); i !== -1; i = rest.indexOf("@", i + 1)) {
          if (HOST_AFTER_AT.test(rest.slice(i + 1))) at = i;
        }
        if (at === -1) return whole;
      }
      return `${lead}${scheme}${MASK}${rest.slice(at)}`;
    },
  );
}

/** scp-style `user:password@host:path` (no scheme) has its login masked the same way. */
function maskScpLogins(text: string): string {
  // One match per run of characters ending in '@' before a host and ':', the login found inside
  // it: no run is scanned again from each of its characters, and no length is bounded.
  return text.replace(/(?<![^\s@])[^\s@]+@(?=[A-Za-z0-9.-]+:)/g, (segment) => {
    const login = /(^|["'(=])[^\s:@/"'(=]+:/.exec(segment);
    return login === null ? segment : segment.slice(0, login.index + login[1]!.length) + MASK + "@";
  });
}

function looksRandom(s: string): boolean {
  return /[a-z]/.test(s) && /[A-Z]/.test(s) && /[0-9]/.test(s);
}

function looksLikePath(s: string): boolean {
  return s.includes("/") && s.split("/").every((part) => part.length < 24);
}

type Replacement = string | ((match: string, ...groups: string[]) => string);

// Vendor prefixes are secret-detection data, kept deliberately specific.
const SHAPES: ReadonlyArray<readonly [RegExp, Replacement]> = [
  // An Authorization-header value, whatever the token's own shape.
  [/\b(Bearer)(\s+)[A-Za-z0-9._~+/=-]{4,}/gi, `$1$2${MASK}`],
  [/\b(Basic)(\s+)[A-Za-z0-9+/]{8,}={0,2}/g, `$1$2${MASK}`],
  // JWT: three base64url parts, the first an encoded JSON object.
  [/(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, MASK],
  // sk-..., sk_live_..., pk_..., rk_...
  [/\bsk-[A-Za-z0-9_-]{8,}/g, MASK],
  // The whole run, once, when a group of it has 16 alphanumerics: a run of many sk- starts is one match.
  [/\b(?:sk|pk|rk)[-_][A-Za-z0-9_-]*/g, (m) => (/(?:^|[-_])[A-Za-z0-9]{16,}(?=[-_]|$)/.test(m.slice(3)) ? MASK : m)],
  // GitHub, Slack, npm, AWS access key ids.
  [/\bgh[pousr]_[A-Za-z0-9]{16,}/g, MASK],
  [/\bgithub_pat_[A-Za-z0-9_]{20,}/g, MASK],
  [/\bxox[abposr]-[A-Za-z0-9-]{8,}/g, MASK],
  [/\bxapp-[A-Za-z0-9-]{8,}/g, MASK],
  [/\bnpm_[A-Za-z0-9]{36}\b/g, MASK],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, MASK],
  // `id.secret` session tokens: 16+ url-safe characters, a dot, 20+; or a shorter id whose secret looks random.
  // A token is the whole of its dotted word: two parts inside a longer dotted name (a wheel's
  // `pydantic_core-2.46.0-cp312-...-manylinux_2_17_x86_64.manylinux2014_x86_64.whl`, a host) are
  // not one; a sentence's full stop after a token still ends it.
  [/(?<![A-Za-z0-9_-]|[A-Za-z0-9_-]\.)[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{20,}(?![A-Za-z0-9_-]|\.[A-Za-z0-9_-])/g, MASK],
  [
    /(?<![A-Za-z0-9_-]|[A-Za-z0-9_-]\.)[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{20,}(?![A-Za-z0-9_.-])/g,
    (m) => (looksRandom(m.split(".")[1] ?? "") ? MASK : m),
  ],
  // 32+ hex characters: raw keys, secrets, signatures. A content digest labelled `sha256:`
  // (a consent digest) names bytes anyone can hash; it is evidence, not a credential.
  [/(?<![0-9A-Fa-f])(?<!sha256:)[0-9A-Fa-f]{32,}(?![0-9A-Fa-f])/g, MASK],
  // Long base64 keys, only when the run looks random (mixed case and digits), so words and paths survive.
  [
    /(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{40,}={0,2}(?![A-Za-z0-9+/=_-])/g,
    (m) => (looksRandom(m) && !looksLikePath(m) ? MASK : m),
  ],
];

/** Masks every credential shape in a text: private key blocks, URL and scp logins, tokens and keys. */
export function maskCredentialShapes(text: string): string {
  let out = maskScpLogins(maskUrlLogins(text.replace(PRIVATE_KEY_BLOCK, MASK)));
  for (const [pattern, replacement] of SHAPES) {
    out = out.replace(pattern, replacement as (substring: string, ...args: string[]) => string);
  }
  return out;
}

// --- masking by value ----------------------------------------------------------------

/**
 * Characters no credential shape above holds (tokens, keys, URL and scp logins, id.secret
 * pairs): a text cut just after one cuts no shape in two.
 */
const OUTSIDE_EVERY_SHAPE = /[\s"'`,;<>()[\]{}|\\]/;
/** `Bearer` or `Basic` ending a text: the whitespace after it belongs to the token's shape. */
const AUTH_SCHEME_END = /(?:^|[^A-Za-z0-9_])(?:Bearer|Basic)$/i;
const WHITESPACE = /\s/;

/** True when the character at `i` is one no shape contains (the whitespace of `Bearer <token>` is the shape's). */
function isBreak(text: string, i: number): boolean {
  const ch = text[i];
  if (ch === undefined || !OUTSIDE_EVERY_SHAPE.test(ch)) return false;
  return !WHITESPACE.test(ch) || !followsAuthScheme(text, whitespaceRunStart(text, i));
}

/** Where the run of whitespace holding position `i` starts. */
function whitespaceRunStart(text: string, i: number): number {
  let start = i;
  while (start > 0 && WHITESPACE.test(text[start - 1]!)) start--;
  return start;
}

/** True when `Bearer` or `Basic` ends just before `at`. */
function followsAuthScheme(text: string, at: number): boolean {
  return AUTH_SCHEME_END.test(text.slice(Math.max(0, at - 7), at));
}

/** Where the whitespace-delimited word holding position `i` starts and ends. */
function wordAround(text: string, i: number): { start: number; end: number } {
  let start = i;
  while (start > 0 && !WHITESPACE.test(text[start - 1]!)) start--;
  let end = i;
  while (end < text.length && !WHITESPACE.test(text[end]!)) end++;
  return { start, end };
}

/**
 * True when `cut` falls inside a URL or scp login (`scheme://user:pass@host`, `user:pass@host:`):
 * a password may hold `;`, `,`, `(` or `'`, so only whitespace ends such a word.
 */
function insideLogin(text: string, cut: number): boolean {
  const { start, end } = wordAround(text, cut);
  if (start >= cut || end <= cut) return false;
  const word = text.slice(start, end);
  // No '@' needed: in a line still arriving it may not have come yet; a login may start anywhere in the word.
  return word.includes("://") || /(?:^|["'(=,;])[^\s:@/"'(=,;]+:/.test(word);
}

/** True when cutting `text` at `cut` splits a word (neither side of it is a break) or a login. */
export function cutsThroughWord(text: string, cut: number): boolean {
  if (cut <= 0 || cut >= text.length) return false;
  return (!isBreak(text, cut - 1) && !isBreak(text, cut)) || insideLogin(text, cut);
}

/**
 * A piece of a text cut through a word, masked at the cut, after its values and shapes were:
 * `trailing` masks the whitespace-delimited word it ends with, `leading` the one it begins with
 * (the rest of the word cut before it, after any whitespace it opens with). Halves of a
 * credential match no shape, so both are masked whole.
 */
export function maskWordsAtCut(piece: string, { leading, trailing }: { leading: boolean; trailing: boolean }): string {
  let out = piece;
  if (leading) {
    let first = 0;
    while (first < out.length && WHITESPACE.test(out[first]!)) first++;
    out = MASK + out.slice(wordAround(out, first).end);
  }
  if (trailing) out = out.slice(0, wordAround(out, out.length).start) + MASK;
  return out;
}

/** The shortest line of a multi-line value that is masked on its own (shorter ones are "{" or "},"). */
const MIN_SECRET_LINE_CHARS = 8;

/**
 * The values worth masking, deduplicated and longest first. A value of several lines (a PEM key, a JSON credential) also gives each of its
 * lines, trimmed: a log is masked line by line, where the whole value never appears.
 */
function maskableValues(secrets: readonly string[] | undefined): string[] {
  const values = new Set<string>();
  for (const value of secrets ?? []) {
    if (value.length < MIN_SECRET_CHARS) continue;
    values.add(value);
    if (!/[\r\n]/.test(value)) continue;
    for (const line of value.split(/\r\n|\r|\n/)) {
      const piece = line.trim();
      if (piece.length >= MIN_SECRET_LINE_CHARS) values.add(piece);
    }
  }
  return [...values].sort((a, b) => b.length - a.length);
}

/**
 * Where to cut `text` (longer than `at`) into a piece of at most `at` characters and the rest,
 * so that each is masked as the whole would be: no value of `secrets` straddles the cut, whether
 * whole or begun at the end of `text` with the rest still to come, and no word (a run of
 * characters a credential shape may hold: every shape is one) is cut when the piece holds a
 * character no shape contains (a space, a quote, a comma, a bracket…): the cut comes just after
 * the last one. A piece that is one word is cut at `at`; cutsThroughWord tells the caller, who
 * masks the word on both sides (maskWordsAtCut).
 * null when the cut must wait for more text (a value is still arriving from the very start);
 * never for a `complete` line, where nothing more will come.
 */
export function maskSafeCut(text: string, at: number, secrets?: readonly string[], complete = false): number | null {
  const values = maskableValues(secrets);
  let cut = at;
  if (!isBreak(text, at - 1) && !isBreak(text, at)) {
    for (let i = at - 1; i > 0; i--) {
      const ch = text[i]!;
      if (!OUTSIDE_EVERY_SHAPE.test(ch)) continue;
      if (!WHITESPACE.test(ch)) {
        cut = i + 1;
        break;
      }
      // A run of whitespace is judged once: a break, unless it follows Bearer or Basic.
      const start = whitespaceRunStart(text, i);
      if (!followsAuthScheme(text, start)) {
        cut = i + 1;
        break;
      }
      i = start;
    }
  }
  // A login stays whole up to its whitespace, and a key block's header is never cut.
  if (insideLogin(text, cut)) {
    const { start } = wordAround(text, cut);
    if (start > 0) cut = start;
  }
  const header = text.lastIndexOf("-----BEGIN", cut - 1);
  if (header > 0 && cut - header < 128) {
    const closed = text.indexOf("-----", header + 10);
    if (closed === -1 || closed + 5 > cut) cut = header;
  }
  for (let moved = true; moved && cut > 0;) {
    moved = false;
    for (const value of values) {
      for (let i = Math.max(0, cut - value.length + 1); i < cut; i++) {
        const piece = text.slice(i, i + value.length);
        if (piece === value || (i + value.length > text.length && value.startsWith(piece))) {
          cut = i;
          moved = true;
          break;
        }
      }
    }
  }
  if (cut > 0) return cut;
  // A value longer than a piece, or begun at the start: the piece runs on past every value the
  // cut would split, once all of them can have come.
  const longest = values[0]?.length ?? 0;
  if (!complete && text.length < at + longest) return null;
  let forward = Math.max(at, longest);
  for (let moved = true; moved && forward < text.length;) {
    moved = false;
    for (const value of values) {
      for (let i = Math.max(0, forward - value.length + 1); i < forward; i++) {
        if (text.startsWith(value, i)) {
          forward = i + value.length;
          moved = true;
          break;
        }
      }
    }
  }
  return Math.min(forward, text.length);
}

/**
 * Masks each exact value wherever it appears, as a substring too. Every place a value occurs is
 * found in the text as given and overlapping or touching places are masked as one, so two
 * values that share characters ("…key123" and "123secret…") leave no tail of either.
 */
export function maskExactValues(text: string, secrets: readonly string[] | undefined): string {
  const places: Array<[number, number]> = [];
  for (const value of maskableValues(secrets)) {
    for (let at = text.indexOf(value); at !== -1; at = text.indexOf(value, at + 1))
      places.push([at, at + value.length]);
  }
  if (places.length === 0) return text;
  places.sort((a, b) => a[0] - b[0]);
  let out = "";
  let kept = 0;
  let [start, end] = places[0]!;
  for (const [from, to] of places) {
    if (from <= end) {
      end = Math.max(end, to);
      continue;
    }
    out += text.slice(kept, start) + MASK;
    kept = end;
    [start, end] = [from, to];
  }
  return out + text.slice(kept, start) + MASK + text.slice(end);
}

/** Masks the exact values the caller knows, then every credential shape. */
export function maskCredentials(text: string, secrets?: readonly string[]): string {
  return maskCredentialShapes(maskExactValues(text, secrets));
}

// --- both, for display ---------------------------------------------------------------

/** Third-party text as one safe line: credentials masked, every unsafe character escaped (newlines too). */
export function safeLine(text: string, secrets?: readonly string[]): string {
  return escapeControls(maskCredentials(text, secrets));
}

/**
 * A masker for a stream of lines (a child's output): each line is masked by value and shape,
 * and a private key block spanning lines is masked from its BEGIN line through its END line.
 */
export function createLineMasker(secrets?: readonly string[]): (line: string) => string {
  const values = maskableValues(secrets);
  let inPrivateKey = false;
  return (line) => {
    if (inPrivateKey) {
      const end = PRIVATE_KEY_END.exec(line);
      if (end === null) return MASK;
      inPrivateKey = false;
      line = MASK + line.slice(end.index + end[0].length);
    } else {
      const begin = PRIVATE_KEY_BEGIN.exec(line);
      if (begin !== null && !PRIVATE_KEY_END.test(line.slice(begin.index))) {
        inPrivateKey = true;
        line = line.slice(0, begin.index) + MASK;
      }
    }
    return maskCredentials(line, values);
  };
}

/**
 * Third-party text that keeps its lines: each line masked (a key block across lines too) and
 * escaped, CR included, so no line can overwrite or reorder another. CRLF counts as a newline.
 */
export function safeLines(text: string, secrets?: readonly string[]): string {
  const mask = createLineMasker(secrets);
  return text
    .split(/\r?\n/)
    .map((line) => escapeControls(mask(line), { keepLines: true }))
    .join("\n");
}

// --- HTML text -----------------------------------------------------------------------

const HTML_ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/**
 * Third-party text for a page the gateway writes as HTML: a safe line (credentials masked,
 * unsafe characters escaped), then every markup character as an entity, so it is inert both
 * as a text node and inside a quoted attribute.
 */
export function safeHtmlText(text: string, secrets?: readonly string[]): string {
  return safeLine(text, secrets).replace(/[&<>"']/g, (ch) => HTML_ENTITIES[ch]!);
}
