// The OpenAPI document is what a toolchain consumes: the committed docs/openapi.json is a fresh
// render of the route table, the gateway answers the same document, and a client generated from it
// with openapi-typescript type-checks under --strict and lists apps and reads the security log.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayPerSuite, repoRoot } from "./helpers/gateway";

const run = promisify(execFile);
const bin = (name: string) => join(repoRoot, "node_modules", ".bin", name);
const committed = () => readFileSync(join(repoRoot, "docs", "openapi.json"), "utf8");

const CLIENT = `import createClient from "openapi-fetch";
import type { paths } from "./api.js";

const client = createClient<paths>({
  baseUrl: process.env.GATEWAY_BASE,
  headers: { authorization: \`Bearer \${process.env.GATEWAY_TOKEN}\` },
});
const apps = await client.GET("/api/apps");
if (!apps.data) throw new Error(\`apps: \${apps.response.status}\`);
const names: string[] = apps.data.apps.map((app) => app.name);
const log = await client.GET("/api/security/events", { params: { query: { limit: 5 } } });
if (!log.data) throw new Error(\`events: \${log.response.status}\`);
const kinds: string[] = log.data.events.map((event) => event.kind);
const refused = await client.GET("/api/apps/{name}", { params: { path: { name: "no-such-app" } } });
console.log(JSON.stringify({ names, kinds, refused: refused.error?.error.code, status: refused.response.status }));
`;

describe("docs/openapi.json", () => {
  it("equals a fresh render of the route table", async () => {
    const { stdout } = await run(process.execPath, [join(repoRoot, "dist", "render-openapi.mjs")], {
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(committed()).toBe(stdout);
  });
});

describe("a client generated from the OpenAPI document", () => {
  const gateway = gatewayPerSuite();
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "pc-openapi-"));
    symlinkSync(join(repoRoot, "node_modules"), join(dir, "node_modules"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
    const served = await gateway.fetch("/api/openapi.json");
    expect(served.status).toBe(200);
    writeFileSync(join(dir, "openapi.json"), await served.text());
    await run(bin("openapi-typescript"), [join(dir, "openapi.json"), "-o", join(dir, "api.d.ts")]);
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is the committed document, served by the gateway", () => {
    expect(JSON.parse(readFileSync(join(dir, "openapi.json"), "utf8"))).toEqual(JSON.parse(committed()));
  });

  it("type-checks under --strict, and refuses a call the document does not allow", async () => {
    writeFileSync(join(dir, "client.ts"), CLIENT);
    writeFileSync(join(dir, "wrong.ts"), CLIENT.replace("limit: 5", 'limit: "five"'));
    // One run checks both: the right client without an error, the wrong one with exactly its own.
    const args = ["--strict", "--noEmit", "--skipLibCheck", "--module", "nodenext", "--target", "es2022"];
    const checked = await run(bin("tsc"), [...args, "--types", "node", "client.ts", "wrong.ts"], { cwd: dir }).then(
      () => "",
      (error: { stdout: string }) => error.stdout,
    );
    const errors = checked.split("\n").filter((line) => /error TS/.test(line));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^wrong\.ts\(\d+,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/);
  }, 120_000);

  it("lists the apps and reads the security log of a running gateway, and reads a refusal's code", async () => {
    const { build } = await import("esbuild");
    await build({
      entryPoints: [join(dir, "client.ts")],
      outfile: join(dir, "client.mjs"),
      bundle: true,
      platform: "node",
      format: "esm",
      logLevel: "error",
    });
    const { stdout } = await run(process.execPath, [join(dir, "client.mjs")], {
      env: { ...process.env, GATEWAY_BASE: gateway.base, GATEWAY_TOKEN: gateway.token },
    });
    const answer = JSON.parse(stdout) as { names: string[]; kinds: string[]; refused: string; status: number };
    const listed = (await (await gateway.fetch("/api/apps")).json()) as { apps: Array<{ name: string }> };
    expect(answer.names).toEqual(listed.apps.map((app) => app.name));
    expect(answer.names.length).toBeGreaterThan(0);
    expect(answer.kinds.length).toBeGreaterThan(0);
    expect(answer).toMatchObject({ refused: "app_not_found", status: 404 });
  }, 60_000);
});
