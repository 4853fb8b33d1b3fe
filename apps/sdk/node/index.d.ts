import type { IncomingMessage, ServerResponse } from "node:http";

export declare const PROXY_SIGNATURE_HEADER: "x-personalclaw-proxy";
export declare const REFUSAL_STATUS: 401;
export declare const REFUSAL_BODY: string;
export declare const TOO_LARGE_STATUS: 413;
export declare const TOO_LARGE_BODY: string;

export type RefusalReason =
  | "secret_missing"
  | "header_missing"
  | "header_repeated"
  | "header_malformed"
  | "timestamp_outside_window"
  | "signature_mismatch"
  | "signature_replayed"
  | "body_too_large";

export interface VerifierOptions {
  /** Defaults to process.env.PERSONALCLAW_APP_SECRET; missing or empty refuses every signed request. */
  secret?: string;
  /** Exempt from the signature for GET/HEAD on exactly this pathname; null exempts nothing. Default '/health'. */
  healthPath?: string | null;
  /** Allowed clock skew in seconds either way. Default 60. */
  windowS?: number;
  /** Clock in Unix seconds. */
  now?: () => number;
  /** Larger bodies answer 413 before the route runs. Default 16 MiB. */
  maxBodyBytes?: number;
  /** Called once per refusal; the default writes one JSON line to stderr. */
  onRefusal?: (reason: RefusalReason, info: { method: string; path: string }) => void;
}

export interface Verifier {
  readonly hasSecret: boolean;
  readonly maxBodyBytes: number;
  /** Secret, header count, header form (`<ts>:<nonce>:<hmac_hex>`, canonical) and clock: what needs no body. */
  precheck(headerValues: readonly string[], now?: number): RefusalReason | null;
  /** Everything precheck checks, then the HMAC, then the nonce: each nonce is accepted once within the window. */
  verify(req: {
    method: string;
    target: string | Uint8Array;
    headerValues: readonly string[];
    body: Uint8Array;
  }): { ok: true } | { ok: false; reason: RefusalReason };
  isExempt(method: string, target: string | Uint8Array): boolean;
  refuse(reason: RefusalReason, method: string, target: string | Uint8Array): void;
}

export type SignedRequest = IncomingMessage & { rawBody: Buffer };

export declare function createVerifier(opts?: VerifierOptions): Verifier;

export declare function withSignature(
  handler: (req: SignedRequest, res: ServerResponse, rawBody: Buffer) => unknown,
  opts?: VerifierOptions | Verifier,
): (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export declare function requireProxySignature(
  opts?: VerifierOptions | Verifier,
): (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/** Structural subset of Hono's Context this middleware uses. */
export interface HonoLikeContext {
  env: unknown;
  req: {
    method: string;
    url: string;
    raw: Request;
    header(name: string): string | undefined;
    arrayBuffer(): Promise<ArrayBuffer>;
  };
  body(data: string, status: number, headers: Record<string, string>): Response;
  set(key: "rawBody", value: Uint8Array): void;
}

export declare function honoVerifier(
  opts?: VerifierOptions | Verifier,
): (c: HonoLikeContext, next: () => Promise<void>) => Promise<Response | void>;
