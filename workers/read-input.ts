// Step 6's input half: every body and query is read once, capped, parsed strictly and
// checked against the route's zod schema before a handler sees it.
import type { z } from "zod";
import { GatewayError } from "../kernel/contracts/errors";
import { parseStrictJson } from "../kernel/text/strict-json";

export const API_BODY_LIMIT = 1024 * 1024;

/** Reads a request body up to `limit` bytes; 413 `body_too_large` beyond it, whatever Content-Length claimed. */
export async function readCappedBody(request: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit) throw new GatewayError("body_too_large", { vars: { limit } });
  if (!request.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      throw new GatewayError("body_too_large", { vars: { limit } });
    }
    chunks.push(value);
  }
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/** Parses a JSON object body against `schema`, mapping every failure to its stable code. */
export async function readJsonBody<T>(request: Request, schema: z.ZodType<T>): Promise<T> {
  const type = request.headers.get("content-type") ?? "";
  const bytes = await readCappedBody(request, API_BODY_LIMIT);
  if (bytes.byteLength === 0 && type === "") return parseAgainst(schema, {});
  if (!/^application\/json\s*(;|$)/i.test(type)) throw new GatewayError("unsupported_media_type");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new GatewayError("bad_request", { vars: { reason: "the body is not UTF-8" } });
  }
  const parsed = parseStrictJson(text);
  if (!parsed.ok) throw new GatewayError("bad_request", { vars: { reason: parsed.reason } });
  if (parsed.value === null || typeof parsed.value !== "object" || Array.isArray(parsed.value)) {
    throw new GatewayError("bad_request", { vars: { reason: "the body must be a JSON object" } });
  }
  return parseAgainst(schema, parsed.value);
}

/** Parses query parameters (first value of each name) against `schema`. */
export function readQuery<T>(url: URL, schema: z.ZodType<T>): T {
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) if (!(name in query)) query[name] = value;
  return parseAgainst(schema, query);
}

function parseAgainst<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue.path.join(".") || "(body)";
  if (issue.code === "invalid_type" && issue.expected === "boolean") {
    throw new GatewayError("field_not_a_boolean", { vars: { field } });
  }
  throw new GatewayError("bad_request", { vars: { reason: `the field '${field}' is invalid (${issue.message})` } });
}
