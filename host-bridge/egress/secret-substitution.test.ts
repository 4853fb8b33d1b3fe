// Where a placeholder may be replaced by its secret's value, and where it is refused: the rule
// in-process, with hostile placements (another host, another header, the path, another
// secret's origin, encoded forms) and the masking of what an origin answers.
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { parseSecretOrigin, type SecretOrigin, type SecretOriginUse } from "../../kernel/contracts/secret-delivery";
import { newPlaceholder, placeSecrets, type PlacedSecret } from "./secret-placeholders";
import { MaskingStream, secretOriginOf, substituteSecrets, type Needle } from "./secret-substitution";

const API = parseSecretOrigin("https://api.example.com") as SecretOrigin;
const OTHER = parseSecretOrigin("https://other.example.com:8443") as SecretOrigin;

function secret(name: string, use: SecretOriginUse, origins: SecretOrigin[], value: string | null): PlacedSecret {
  return { name, use, origins: () => origins, read: () => value, placeholder: newPlaceholder() };
}

const bearer = secret(
  "API_KEY",
  { origins: [API.origin], header: "Authorization", format: "Bearer {value}" },
  [API],
  "sk-live-1234567890",
);
const query = secret("QUERY_KEY", { origins: [API.origin], query: "api_key" }, [API], "q v&l=ue");
const other = secret("OTHER_KEY", { origins: [OTHER.origin], header: "X-Api-Key" }, [OTHER], "other-value-9876");
const all = [bearer, query, other];
const apiTarget = { host: "api.example.com", port: 443 };

describe("placeholders", () => {
  it("are new at every start, 192 random bits each, and name the http:// base URL of the first origin", () => {
    const first = placeSecrets([bearer]);
    const second = placeSecrets([bearer]);
    expect(first.placed[0]!.placeholder).not.toBe(second.placed[0]!.placeholder);
    expect(first.placed[0]!.placeholder).toMatch(/^pc-placeholder-[A-Za-z0-9_-]{32}$/);
    expect(first.env).toEqual({
      API_KEY: first.placed[0]!.placeholder,
      PERSONALCLAW_ORIGIN_API_KEY: "http://api.example.com",
    });
    expect(placeSecrets([other]).env.PERSONALCLAW_ORIGIN_OTHER_KEY).toBe("http://other.example.com:8443");
  });

  it("a plain-HTTP request is for an origin on 443 at port 80 and on its own port otherwise", () => {
    expect(secretOriginOf(all, { host: "api.example.com", port: 80 })).toBe(API);
    expect(secretOriginOf(all, { host: "api.example.com", port: 443 })).toBe(API);
    expect(secretOriginOf(all, { host: "other.example.com", port: 8443 })).toBe(OTHER);
    expect(secretOriginOf(all, { host: "other.example.com", port: 80 })).toBeNull();
    expect(secretOriginOf(all, { host: "evil.example.com", port: 80 })).toBeNull();
  });
});

describe("substitution", () => {
  it("writes the current value in the declared header's format and asks for an answer it can mask", () => {
    const plan = substituteSecrets(
      all,
      API,
      apiTarget,
      ["Host", "api.example.com", "Authorization", `token ${bearer.placeholder}`, "Accept-Encoding", "gzip"],
      "/v1",
    );
    expect(plan).toMatchObject({ ok: true, path: "/v1" });
    if (!plan.ok) return;
    expect(plan.headers).toEqual([
      "Host",
      "api.example.com",
      "Authorization",
      "Bearer sk-live-1234567890",
      "Accept-Encoding",
      "identity",
    ]);
    expect(plan.needles.map((n) => n.text)).toContain("sk-live-1234567890");
  });

  it("writes a query parameter's value encoded, leaving every other parameter's bytes as they were", () => {
    const plan = substituteSecrets(
      all,
      API,
      apiTarget,
      ["Host", "api.example.com"],
      `/s?q=a+b%20c&api_key=${query.placeholder}&x=1`,
    );
    expect(plan).toMatchObject({ ok: true, path: "/s?q=a+b%20c&api_key=q%20v%26l%3Due&x=1" });
  });

  it("replaces a placeholder written as the password of Basic credentials", () => {
    const basic = secret("BASIC_KEY", { origins: [API.origin], basic: true }, [API], "basic-secret-42");
    const credentials = Buffer.from(`ada:${basic.placeholder}`).toString("base64");
    const plan = substituteSecrets([basic], API, apiTarget, ["Authorization", `Basic ${credentials}`], "/");
    expect(plan.ok).toBe(true);
    if (!plan.ok) return;
    expect(Buffer.from(plan.headers[1]!.slice(6), "base64").toString()).toBe("ada:basic-secret-42");
    // The encoded credentials are masked in an answer too, not only the value.
    expect(plan.needles.map((n) => n.text)).toContain(plan.headers[1]!.slice(6));
  });

  it("reads the value at each request: a replaced value is used at the next one", () => {
    let value = "first-value-123";
    const rotating = { ...bearer, read: () => value };
    const header = ["Authorization", `Bearer ${rotating.placeholder}`];
    expect(substituteSecrets([rotating], API, apiTarget, header, "/")).toMatchObject({
      ok: true,
      headers: ["Authorization", "Bearer first-value-123", "Accept-Encoding", "identity"],
    });
    value = "second-value-456";
    expect(substituteSecrets([rotating], API, apiTarget, header, "/")).toMatchObject({
      ok: true,
      headers: ["Authorization", "Bearer second-value-456", "Accept-Encoding", "identity"],
    });
  });

  it("a request with no placeholder goes as it came", () => {
    expect(substituteSecrets(all, API, apiTarget, ["Authorization", "Bearer mine"], "/?api_key=mine")).toEqual({
      ok: true,
      headers: ["Authorization", "Bearer mine"],
      path: "/?api_key=mine",
      needles: [],
    });
  });
});

describe("a placeholder where its secret does not go is refused, never replaced", () => {
  const refusedWith = (plan: ReturnType<typeof substituteSecrets>) => (plan.ok ? "replaced" : plan.code);

  it("to a host that is not one of its origins, in any header, Basic credentials, the path or the query", () => {
    const evil = { host: "evil.example.com", port: 80 };
    const basic = Buffer.from(`u:${bearer.placeholder}`).toString("base64");
    for (const [headers, path] of [
      [["Authorization", `Bearer ${bearer.placeholder}`], "/"],
      [["X-Anything", bearer.placeholder], "/"],
      [["Authorization", `Basic ${basic}`], "/"],
      [[], `/${bearer.placeholder}`],
      [[], `/?api_key=${query.placeholder}`],
      [[], `/?q=${encodeURIComponent(`x ${bearer.placeholder}`)}`],
    ] as const) {
      const plan = substituteSecrets(all, null, evil, headers, path);
      expect(refusedWith(plan), JSON.stringify([headers, path])).toBe("secret_misdirected");
      if (!plan.ok) {
        expect(plan.reason).toContain("evil.example.com:80");
        expect(plan.reason).not.toContain(bearer.placeholder);
        expect(plan.reason).not.toContain("sk-live");
      }
    }
  });

  it("to its own origin in a place it was not declared for: another header, a cookie, the path, another parameter", () => {
    for (const [headers, path] of [
      [["X-Debug", bearer.placeholder], "/"],
      [["Cookie", `k=${bearer.placeholder}`], "/"],
      [["Authorization", `Basic ${Buffer.from(`u:${bearer.placeholder}`).toString("base64")}`], "/"],
      [[], `/echo/${bearer.placeholder}`],
      [[], `/?key=${bearer.placeholder}`],
      [[], `/?other=${query.placeholder}`],
      [[], `/?api_key=${query.placeholder}x`],
    ] as const)
      expect(refusedWith(substituteSecrets(all, API, apiTarget, headers, path)), JSON.stringify([headers, path])).toBe(
        "secret_misdirected",
      );
  });

  it("to the origin of another secret, even in the header that secret is declared for", () => {
    const otherTarget = { host: "other.example.com", port: 8443 };
    expect(refusedWith(substituteSecrets(all, OTHER, otherTarget, ["X-Api-Key", bearer.placeholder], "/"))).toBe(
      "secret_misdirected",
    );
    expect(refusedWith(substituteSecrets(all, OTHER, otherTarget, ["X-Api-Key", other.placeholder], "/"))).toBe(
      "replaced",
    );
  });

  it("a secret no longer assigned is refused with its own code, its placeholder never sent", () => {
    const gone = { ...bearer, read: () => null };
    expect(
      refusedWith(substituteSecrets([gone], API, apiTarget, ["Authorization", `Bearer ${gone.placeholder}`], "/")),
    ).toBe("secret_unavailable");
  });
});

describe("masking an answer", () => {
  const needles = (texts: string[]): Needle[] =>
    texts.map((text) => ({ text, raw: Buffer.from(text), mask: Buffer.alloc(Buffer.byteLength(text), "*") }));

  async function masked(chunks: string[], texts: string[]): Promise<string> {
    const out: Buffer[] = [];
    const stream = Readable.from(chunks.map((c) => Buffer.from(c))).pipe(new MaskingStream(needles(texts)));
    for await (const chunk of stream) out.push(chunk as Buffer);
    return Buffer.concat(out).toString();
  }

  it("masks every occurrence byte for byte, even split across chunks one byte at a time", async () => {
    const body = 'echo: "Bearer sk-live-1234567890" and sk-live-1234567890!';
    expect(await masked([body], ["sk-live-1234567890"])).toBe(
      `echo: "Bearer ${"*".repeat(18)}" and ${"*".repeat(18)}!`,
    );
    expect(await masked([...body], ["sk-live-1234567890"])).toBe(await masked([body], ["sk-live-1234567890"]));
    expect((await masked([...body], ["sk-live-1234567890"])).length).toBe(body.length);
  });

  it("passes a body without a needle unchanged, however it is cut", async () => {
    const body = "sk-live-12345 almost, but not the value";
    expect(await masked([body.slice(0, 7), body.slice(7)], ["sk-live-1234567890"])).toBe(body);
  });
});
