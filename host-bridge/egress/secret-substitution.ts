// How an egress broker puts a secret on the wire for its consented origin only (issue 38).
// Threat: an app that holds a key can send it anywhere it can reach, store it, or print it
// encoded past every masker. Its app holds a placeholder instead; here, for a plain-HTTP
// request to a secret's origin, the placeholder is replaced by the current value in the one
// place the manifest declared (a header in its format, Basic credentials, a query parameter),
// and the value is masked in whatever the origin answers. A placeholder anywhere else — another
// host (even a granted one), another header, the path — is refused, never replaced.
import type http from "node:http";
import { Transform, type Readable, type TransformCallback } from "node:stream";
import { MIN_SECRET_CHARS } from "../../kernel/text/text-safety";
import { secretPlaceWords, VALUE_MARK, type SecretOrigin } from "../../kernel/contracts/secret-delivery";
import type { PlacedSecret } from "./secret-placeholders";

export type SecretRefusalCode = "secret_misdirected" | "secret_unavailable";

/** A text the answer must not carry, its bytes, and as many `*` it is masked with. */
export interface Needle {
  text: string;
  raw: Buffer;
  mask: Buffer;
}

export type SecretPlan =
  | { ok: true; headers: string[]; path: string; needles: Needle[] }
  | { ok: false; code: SecretRefusalCode; reason: string };

/** Where a placeholder was found in a request. */
interface Occurrence {
  secret: PlacedSecret;
  /** The header pair's index in the forwarded headers; -1 for the request target. */
  index: number;
  place: "header" | "basic" | "query" | "elsewhere";
  where: string;
}

/**
 * The secret origin a plain-HTTP request is for: `http://host` is the origin on port 443,
 * `http://host:port` the origin on that port. Null when no secret of the app goes there.
 */
export function secretOriginOf(
  secrets: readonly PlacedSecret[],
  target: { host: string; port: number },
): SecretOrigin | null {
  const port = target.port === 80 ? 443 : target.port;
  for (const secret of secrets)
    for (const origin of secret.origins())
      if (origin.host.toLowerCase() === target.host && origin.port === port) return origin;
  return null;
}

const BASIC = /^basic[ \t]+([A-Za-z0-9+/=]+)[ \t]*$/i;

function decodedBasic(value: string): string | null {
  const match = BASIC.exec(value);
  return match ? Buffer.from(match[1]!, "base64").toString("utf8") : null;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return text;
  }
}

/** The query pairs of `path` whose name is `name` and whose value is exactly `placeholder`. */
function queryPairIndexes(path: string, name: string, placeholder: string): number[] {
  const query = path.indexOf("?") < 0 ? "" : path.slice(path.indexOf("?") + 1);
  const out: number[] = [];
  query.split("&").forEach((pair, i) => {
    const eq = pair.indexOf("=");
    if (eq > 0 && safeDecode(pair.slice(0, eq)) === name && safeDecode(pair.slice(eq + 1)) === placeholder) out.push(i);
  });
  return out;
}

/** Every place a placeholder of `secrets` appears in the forwarded headers and the request target. */
function occurrences(secrets: readonly PlacedSecret[], headers: readonly string[], path: string): Occurrence[] {
  const found: Occurrence[] = [];
  for (const secret of secrets) {
    const p = secret.placeholder;
    for (let i = 0; i + 1 < headers.length; i += 2) {
      const name = headers[i]!;
      const value = headers[i + 1]!;
      const lower = name.toLowerCase();
      if (value.includes(p)) {
        const declared = secret.use.header !== undefined && lower === secret.use.header.toLowerCase();
        found.push({ secret, index: i, place: declared ? "header" : "elsewhere", where: `header ${name}` });
      } else if (lower === "authorization" && decodedBasic(value)?.includes(p)) {
        found.push({
          secret,
          index: i,
          place: secret.use.basic ? "basic" : "elsewhere",
          where: "HTTP Basic credentials",
        });
      }
    }
    const declared = secret.use.query !== undefined ? queryPairIndexes(path, secret.use.query, p) : [];
    const query = path.indexOf("?") < 0 ? "" : path.slice(path.indexOf("?") + 1);
    const rest = [path.split("?")[0]!, ...query.split("&").filter((_, i) => !declared.includes(i))].join("&");
    if (rest.includes(p) || safeDecode(rest).includes(p))
      found.push({ secret, index: -1, place: "elsewhere", where: "the request's path or query" });
    else if (declared.length > 0)
      found.push({ secret, index: -1, place: "query", where: `query parameter ${secret.use.query}` });
  }
  return found;
}

/** A text as a needle masked by as many `*` as it has bytes; none for a text too short to mask. */
function needle(text: string): Needle[] {
  const raw = Buffer.from(text, "utf8");
  return text.length < MIN_SECRET_CHARS ? [] : [{ text, raw, mask: Buffer.alloc(raw.length, "*") }];
}

function misdirected(found: Occurrence, host: string): SecretPlan {
  return {
    ok: false,
    code: "secret_misdirected",
    reason: `the placeholder of ${found.secret.name} was found in ${found.where} of a request to ${host}; it is replaced only in ${secretPlaceWords(found.secret.use)} of a request to ${
      found.secret
        .origins()
        .map((o) => o.origin)
        .join(", ") || "no origin now"
    }`,
  };
}

/**
 * The request to send upstream: each placeholder replaced by its secret's current value in its
 * declared place, when `origin` is one of that secret's origins. A placeholder found anywhere
 * else, or in a request that is not for a secret origin (`origin` null), refuses the request;
 * a secret no longer assigned refuses it too. `headers` are the forwarded name/value pairs.
 */
export function substituteSecrets(
  secrets: readonly PlacedSecret[],
  origin: SecretOrigin | null,
  target: { host: string; port: number },
  headers: readonly string[],
  path: string,
): SecretPlan {
  const found = occurrences(secrets, headers, path);
  const host = `${target.host}:${target.port}`;
  for (const one of found) {
    if (!origin || !one.secret.origins().some((o) => o.origin === origin.origin) || one.place === "elsewhere")
      return misdirected(one, origin?.origin ?? host);
  }
  const out = [...headers];
  let outPath = path;
  const needles: Needle[] = [];
  for (const one of found) {
    const value = one.secret.read(origin!.origin);
    if (value === null)
      return { ok: false, code: "secret_unavailable", reason: `${one.secret.name} is no longer assigned to the app` };
    needles.push(...needle(value));
    if (one.place === "header") {
      out[one.index + 1] = (one.secret.use.format ?? VALUE_MARK).split(VALUE_MARK).join(value);
    } else if (one.place === "basic") {
      const credentials = decodedBasic(out[one.index + 1]!)!
        .split(one.secret.placeholder)
        .join(value);
      const encoded = Buffer.from(credentials, "utf8").toString("base64");
      out[one.index + 1] = `Basic ${encoded}`;
      needles.push(...needle(encoded));
    } else {
      const [pathname, query] = [outPath.split("?")[0]!, outPath.slice(outPath.indexOf("?") + 1)];
      const replaced = new Set(queryPairIndexes(outPath, one.secret.use.query!, one.secret.placeholder));
      const pairs = query
        .split("&")
        .map((pair, i) => (replaced.has(i) ? `${pair.split("=")[0]}=${encodeURIComponent(value)}` : pair));
      outPath = `${pathname}?${pairs.join("&")}`;
      if (encodeURIComponent(value) !== value) needles.push(...needle(encodeURIComponent(value)));
    }
  }
  // An answer the broker can read is one it can mask: no compressed body when a value went up.
  if (needles.length > 0) {
    const kept: string[] = [];
    for (let i = 0; i + 1 < out.length; i += 2)
      if (out[i]!.toLowerCase() !== "accept-encoding") kept.push(out[i]!, out[i + 1]!);
    kept.push("Accept-Encoding", "identity");
    return { ok: true, headers: kept, path: outPath, needles: needles.sort((a, b) => b.raw.length - a.raw.length) };
  }
  return { ok: true, headers: out, path: outPath, needles };
}

/**
 * What the app receives of an answer to a request that carried a value: its status text,
 * headers and body with every needle masked. A body the broker cannot read (compressed though
 * it asked for identity) is refused rather than passed on unmasked.
 */
export function maskedAnswer(
  reply: http.IncomingMessage,
  headers: readonly string[],
  needles: readonly Needle[],
): { ok: true; statusMessage: string | undefined; headers: string[]; body: Readable } | { ok: false; reason: string } {
  if (needles.length === 0) return { ok: true, statusMessage: reply.statusMessage, headers: [...headers], body: reply };
  const encoding = (reply.headers["content-encoding"] ?? "identity").trim().toLowerCase();
  if (encoding !== "identity")
    return {
      ok: false,
      reason: `the origin answered with Content-Encoding ${encoding.slice(0, 40)}, which cannot be masked`,
    };
  return {
    ok: true,
    statusMessage: maskText(reply.statusMessage ?? "", needles),
    headers: headers.map((text) => maskText(text, needles)),
    body: reply.pipe(new MaskingStream(needles)),
  };
}

/** A header value with every needle masked. */
export function maskText(text: string, needles: readonly Needle[]): string {
  let out = text;
  for (const n of needles) out = out.split(n.text).join(n.mask.toString("utf8"));
  return out;
}

/**
 * An answer's body with every needle masked, byte for byte (so its length, and any
 * Content-Length, stay right), even where a needle straddles two chunks: the last bytes that
 * could begin one are held back until the next chunk or the end.
 */
export class MaskingStream extends Transform {
  private held = Buffer.alloc(0);
  private readonly longest: number;

  constructor(private readonly needles: readonly Needle[]) {
    super();
    this.longest = Math.max(0, ...needles.map((n) => n.raw.length));
  }

  private masked(buffer: Buffer): Buffer {
    for (const n of this.needles)
      for (let at = buffer.indexOf(n.raw); at >= 0; at = buffer.indexOf(n.raw, at + n.raw.length))
        n.mask.copy(buffer, at);
    return buffer;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const buffer = this.masked(Buffer.concat([this.held, chunk]));
    const keep = Math.min(buffer.length, Math.max(0, this.longest - 1));
    this.held = Buffer.from(buffer.subarray(buffer.length - keep));
    done(null, buffer.subarray(0, buffer.length - keep));
  }

  override _flush(done: TransformCallback): void {
    done(null, this.masked(this.held));
  }
}
