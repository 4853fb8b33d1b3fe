// A secret the app never holds (issue 38), end to end: the real `personalclaw start`, a real
// install, a confined Node backend in bubblewrap whose built-in fetch goes to the base URL in
// PERSONALCLAW_ORIGIN_WEATHER_KEY through its egress broker, and a local TLS origin on a
// loopback address whose certificate comes from a CA made for this run, given to the broker
// through the owner's egress.extra_ca_certs. The origin receives the value; the backend only
// ever sees a placeholder; the same placeholder sent to a second granted host is refused with
// a security-log row; a secret delivered as its value still arrives and the review says so.
import https from "node:https";
import type http from "node:http";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BackendStatus } from "../kernel/contracts/app-record";
import { cliPath, errorCode, repoRoot, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { getFromBackend, install, waitForRow } from "./helpers/backends";
import { makeTestCertificates, type TestCertificates } from "./helpers/test-ca";
// The client half of the vendored MCP SDK: the agent.
// @ts-expect-error a bundled ES module without types
import { Client, StdioClientTransport } from "./fixtures/mcp-client-sdk.mjs";
import { allowEveryTool } from "./helpers/mcp-tool-policy";
import { filesHolding } from "./helpers/home-files";

const json = { "content-type": "application/json" };
const VALUE = "wx-live-Pl4ceh0lder-Only-8f3Kq7Lm2Zp8";
const ROTATED = "wx-live-Rotated-Value-5Vb1Nc4Hd6Qw8";
const LEGACY = "legacy-held-by-app-7Yh2Jk9Pq4Ws";

interface Seen {
  url: string;
  headers: http.IncomingHttpHeaders;
}

describe("a secret delivered as a placeholder, through a running gateway", () => {
  let root: string;
  let home: string;
  let certs: TestCertificates;
  let gw: RunningGateway;
  let origin: https.Server;
  let second: https.Server;
  let originPort: number;
  let secondPort: number;
  let secondConnections = 0;
  const originSaw: Seen[] = [];
  const secondSaw: Seen[] = [];
  let row: BackendStatus;

  const backend = async (path: string) => JSON.parse((await getFromBackend(home, row, path)).body);
  const events = async (kind: string) =>
    ((await (await gw.fetch(`/api/security/events?kind=${kind}&limit=500`)).json()) as { events: any[] }).events;
  const put = (name: string, value: string) =>
    gw.fetch(`/api/secrets/${name}`, { method: "PUT", headers: json, body: JSON.stringify({ value }) });
  const assign = (name: string, app = "secret-user") =>
    gw.fetch(`/api/secrets/${name}/assign`, { method: "POST", headers: json, body: JSON.stringify({ app }) });
  let pyRow: BackendStatus;
  /** A fixture app copied with its ports rewritten to this run's TLS servers. */
  const appFolder = (fixture: string) => {
    const folder = join(root, fixture);
    cpSync(join(repoRoot, "test", "fixtures", "backend-apps", fixture), folder, { recursive: true });
    const manifest = readFileSync(join(folder, "app.json"), "utf8")
      .replaceAll("18443", String(originPort))
      .replaceAll("18444", String(secondPort));
    writeFileSync(join(folder, "app.json"), manifest);
    return folder;
  };

  beforeAll(async () => {
    certs = makeTestCertificates({ addresses: ["127.0.0.2", "127.0.0.3"] });
    origin = https.createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
      originSaw.push({ url: req.url ?? "", headers: req.headers });
      res.writeHead(200, {
        "content-type": "application/json",
        "x-echo-authorization": req.headers.authorization ?? "",
      });
      res.end(JSON.stringify({ forecast: "sunny", youSent: req.headers.authorization ?? null }));
    });
    await new Promise<void>((r) => origin.listen(0, "127.0.0.2", r));
    originPort = (origin.address() as AddressInfo).port;
    second = https.createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
      secondSaw.push({ url: req.url ?? "", headers: req.headers });
      res.end("second host");
    });
    second.on("connection", () => (secondConnections += 1));
    await new Promise<void>((r) => second.listen(0, "127.0.0.3", r));
    secondPort = (second.address() as AddressInfo).port;

    root = mkdtempSync("/var/tmp/pc-placeholder-");
    home = join(root, "home");
    mkdirSync(home);
    // The owner trusts the test CA for secret origins (a consented loosening; the API's side is checked below).
    writeFileSync(join(home, "config.json"), JSON.stringify({ egress: { extra_ca_certs: certs.caPath } }));
    gw = await startGateway({ home });
    await install(home, appFolder("secret-user"));
    await install(home, appFolder("py-secret-user"));
    for (const [name, value] of [
      ["WEATHER_KEY", VALUE],
      ["LEGACY_KEY", LEGACY],
    ] as const) {
      expect((await put(name, value)).status).toBe(200);
      expect((await assign(name)).status).toBe(200);
    }
    expect((await assign("WEATHER_KEY", "py-secret-user")).status).toBe(200);
    for (const app of ["secret-user", "py-secret-user"])
      expect((await gw.fetch(`/api/apps/${app}/restart`, { method: "POST", headers: json, body: "{}" })).status).toBe(
        200,
      );
    const started = (r: BackendStatus) => r.healthy && r.lastLines.some((l) => l.includes("my key is"));
    row = (await waitForRow(gw, "secret-user", started))!;
    expect(row.healthy).toBe(true);
    pyRow = (await waitForRow(gw, "py-secret-user", started))!;
    expect(pyRow.healthy).toBe(true);
  }, 120_000);

  afterAll(async () => {
    await gw?.stop();
    origin?.close();
    second?.close();
    if (root) rmSync(root, { recursive: true, force: true });
    if (certs) rmSync(certs.dir, { recursive: true, force: true });
  });

  it("the origin receives the real value from the backend's fetch to its base URL; the backend's answer holds none", async () => {
    const answer = await backend("/call?path=/v1/forecast");
    expect(answer.status).toBe(200);
    expect(originSaw.at(-1)).toMatchObject({ url: "/v1/forecast", headers: { authorization: `Bearer ${VALUE}` } });
    expect(JSON.stringify(answer)).not.toContain(VALUE);
    expect(JSON.parse(answer.body)).toEqual({ forecast: "sunny", youSent: `Bearer ${"*".repeat(VALUE.length)}` });
  });

  it("inside, the environment and /proc/self/environ hold the placeholder and the origin's http:// base URL, never the value", async () => {
    const env = await backend("/env");
    expect(env.weatherKey).toMatch(/^pc-placeholder-[A-Za-z0-9_-]{32}$/);
    expect(env.origin).toBe(`http://127.0.0.2:${originPort}`);
    expect(env.environ).toContain(`WEATHER_KEY=${env.weatherKey}`);
    expect(JSON.stringify(env)).not.toContain(VALUE);
  });

  it("the same placeholder sent to a second granted host is refused with secret_misdirected and a row; that host is never dialled", async () => {
    const before = secondConnections;
    const answer = await backend(`/send?url=${encodeURIComponent(`http://127.0.0.3:${secondPort}/collect`)}`);
    expect(answer).toMatchObject({ status: 403, egress: "secret_misdirected" });
    expect(secondConnections).toBe(before);
    let rows: any[] = [];
    for (let i = 0; i < 50 && rows.length === 0; i += 1) {
      rows = (await events("secret_misdirected")).filter((e) => e.principal === "app:secret-user");
      if (rows.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(rows[0]).toMatchObject({ outcome: "refused", subject: `127.0.0.3:${secondPort}` });
    expect(JSON.stringify(rows)).not.toContain(VALUE);
  });

  it("a Python backend's urllib to its base URL delivers the value too; its placeholder is its own and goes nowhere else", async () => {
    const python = async (path: string) => JSON.parse((await getFromBackend(home, pyRow, path)).body);
    const answer = await python("/call?path=/v1/py");
    expect(answer.status).toBe(200);
    expect(originSaw.at(-1)).toMatchObject({ url: "/v1/py", headers: { authorization: `Bearer ${VALUE}` } });
    expect(JSON.stringify(answer)).not.toContain(VALUE);
    const env = await python("/env");
    expect(env.weatherKey).toMatch(/^pc-placeholder-/);
    expect(env.weatherKey).not.toBe((await backend("/env")).weatherKey);
    expect(env.origin).toBe(`http://127.0.0.2:${originPort}`);
    expect(JSON.stringify(env)).not.toContain(VALUE);
    const before = secondConnections;
    const refused = await python(`/send?url=${encodeURIComponent(`http://127.0.0.3:${secondPort}/collect`)}`);
    expect(refused).toMatchObject({ status: 403, egress: "secret_misdirected" });
    expect(secondConnections).toBe(before);
  });

  it("a scheduled job its backend answers sends the placeholder the same way, and the origin receives the value", async () => {
    // The job fires through the same path the Durable Object alarm runs, at a moved clock (test build only).
    const jobsAt = async (now?: number) => {
      const headers: Record<string, string> =
        now === undefined
          ? {}
          : {
              "x-test-now": String(now),
              "x-internal-secret": readFileSync(join(home, ".local_secret"), "utf8").trim(),
              "x-personalclaw-work": "cli:test-clock",
            };
      const answer = await gw.fetch("/api/apps/secret-user/jobs", { headers, owner: now === undefined });
      expect(answer.status).toBe(200);
      return ((await answer.json()) as { jobs: Array<Record<string, any>> }).jobs;
    };
    const [job] = await jobsAt();
    expect(job).toMatchObject({ name: "forecast", route: "/jobs/forecast" });
    const fired = (await jobsAt(Date.parse(job!.nextFire) + 1_000))[0]!;
    expect(fired.history).toHaveLength(1);
    expect(fired.history[0]).toMatchObject({ outcome: "ok", status: 200 });
    expect(originSaw.find((s) => s.url === "/v1/job")?.headers.authorization).toBe(`Bearer ${VALUE}`);
    expect(JSON.stringify(fired)).not.toContain(VALUE);
  });

  it("the app's MCP server, started as an agent starts it, gets its own placeholder and its fetch delivers the value", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [cliPath, "mcp", "run", "secret-user", "weather", "--home", home],
      env: { PATH: process.env.PATH! },
      stderr: "pipe",
    });
    const client = new Client({ name: "test-agent", version: "1.0.0" });
    await client.connect(transport);
    await allowEveryTool(gw, client, "secret-user", "weather");
    const call = async (name: string) =>
      JSON.parse(((await client.callTool({ name, arguments: {} })).content as Array<{ text: string }>)[0]!.text);
    try {
      const answer = await call("forecast");
      expect(answer.status).toBe(200);
      expect(originSaw.at(-1)).toMatchObject({ url: "/v1/mcp", headers: { authorization: `Bearer ${VALUE}` } });
      expect(JSON.stringify(answer)).not.toContain(VALUE);
      const env = await call("env");
      expect(env.weatherKey).toMatch(/^pc-placeholder-/);
      expect(env.weatherKey).not.toBe((await backend("/env")).weatherKey);
      expect(env.origin).toBe(`http://127.0.0.2:${originPort}`);
      expect(JSON.stringify(env)).not.toContain(VALUE);
      // The value it holds is its own: LEGACY_KEY reaches the backend only.
      expect(JSON.stringify(env)).not.toContain(LEGACY);
    } finally {
      await client.close();
    }
  });

  it("a replaced value reaches the origin at the next request, without restarting the app", async () => {
    const placeholder = (await backend("/env")).weatherKey;
    expect((await put("WEATHER_KEY", ROTATED)).status).toBe(200);
    await backend("/call?path=/v1/forecast");
    expect(originSaw.at(-1)!.headers.authorization).toBe(`Bearer ${ROTATED}`);
    expect((await backend("/env")).weatherKey).toBe(placeholder);
  });

  it("a secret delivered as its value still arrives, and the review says the app holds it while the other goes only to its origin", async () => {
    const env = await backend("/env");
    expect(env.legacySha256).toBe(createHash("sha256").update(LEGACY).digest("hex"));
    const consent = await (await gw.fetch("/api/apps/secret-user/consent")).json();
    const byName = Object.fromEntries(consent.review.secrets.map((s: any) => [s.name, s]));
    expect(byName.LEGACY_KEY).toMatchObject({ appHoldsValue: true, sendsTo: [] });
    expect(byName.LEGACY_KEY.note).toContain("The app holds this value");
    expect(byName.WEATHER_KEY).toMatchObject({
      appHoldsValue: false,
      sendsTo: [{ origin: `https://127.0.0.2:${originPort}`, place: "header Authorization: Bearer {value}" }],
    });
    expect(byName.WEATHER_KEY.note).toContain("The app never sees this value");
    // The Secrets page and `secrets list` say the same for each secret an app asks for.
    const { declared } = await (await gw.fetch("/api/secrets")).json();
    const holding = (app: string, name: string) =>
      declared.find((d: any) => d.app === app && d.name === name)?.holding as string;
    expect(holding("secret-user", "WEATHER_KEY")).toBe(byName.WEATHER_KEY.note);
    expect(holding("secret-user", "LEGACY_KEY")).toContain("The app holds this value");
  });

  it("the owner sends the secret to another granted origin instead: from the next request, with presence, no restart", async () => {
    const placeholder = (await backend("/env")).weatherKey;
    const secondOrigin = `https://127.0.0.3:${secondPort}`;
    const assignTo = (origins: unknown, headers: Record<string, string> = {}) =>
      gw.fetch("/api/secrets/WEATHER_KEY/assign", {
        method: "POST",
        headers: { ...json, ...headers },
        body: JSON.stringify({ app: "secret-user", ...(origins === undefined ? {} : { origins }) }),
      });
    const declaredNow = async () =>
      ((await (await gw.fetch("/api/secrets")).json()).declared as any[]).find(
        (d) => d.app === "secret-user" && d.name === "WEATHER_KEY",
      );
    // Refused before anything changes: no presence, a host outside the grant, a malformed origin, a secret the app holds.
    const stale = await assignTo([secondOrigin], { "x-test-now": String(Date.now() + 11 * 60_000) });
    expect(await errorCode(stale)).toBe("fresh_sign_in_required");
    expect(await errorCode(await assignTo(["https://127.0.0.4"]))).toBe("secret_origin_not_granted");
    expect(await errorCode(await assignTo([`http://127.0.0.3:${secondPort}`]))).toBe("secret_origin_invalid");
    expect(await errorCode(await assignTo([secondOrigin, secondOrigin]))).toBe("secret_origin_invalid");
    const held = await gw.fetch("/api/secrets/LEGACY_KEY/assign", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ app: "secret-user", origins: [secondOrigin] }),
    });
    expect(await errorCode(held)).toBe("secret_origins_not_brokered");
    expect(await declaredNow()).toMatchObject({
      origins: [`https://127.0.0.2:${originPort}`],
      origins_from: "manifest",
    });

    // The owner's command line, as the Secrets page does it.
    const cli = (args: string[]) => runCli([...args, "--home", home]);
    const moved = await cli(["secrets", "assign", "WEATHER_KEY", "secret-user", "--origin", secondOrigin, "--json"]);
    expect(moved.code, moved.stderr).toBe(0);
    expect(JSON.parse(moved.stdout)).toMatchObject({
      origins: [secondOrigin],
      applies: expect.stringContaining("at once"),
    });
    expect(await declaredNow()).toMatchObject({ origins: [secondOrigin], origins_from: "owner" });
    const listed = await cli(["secrets", "list"]);
    expect(listed.stdout).toContain(`you chose these origins: ${secondOrigin}`);
    expect((await declaredNow()).holding).toContain(`It is sent to ${secondOrigin}`);

    // The running backend, same placeholder: the chosen origin gets the value, the declared one no longer does.
    const sent = await backend(`/send?url=${encodeURIComponent(`http://127.0.0.3:${secondPort}/chosen`)}`);
    expect(sent.status).toBe(200);
    expect(secondSaw.at(-1)).toMatchObject({ url: "/chosen", headers: { authorization: `Bearer ${ROTATED}` } });
    const before = originSaw.length;
    const refused = await backend("/call?path=/v1/declared");
    expect(refused).toMatchObject({ status: 403, egress: "secret_misdirected" });
    expect(originSaw.length).toBe(before);
    expect((await backend("/env")).weatherKey).toBe(placeholder);
    const rows = (await events("secret_assigned")).filter((e) => e.subject === "WEATHER_KEY");
    expect(rows.find((r) => r.detail?.origins_from === "owner")).toMatchObject({
      outcome: "allowed",
      detail: { app: "secret-user", origins: [secondOrigin] },
    });

    // Assigning again without origins returns to the declared one.
    expect((await assignTo(undefined)).status).toBe(200);
    expect(await declaredNow()).toMatchObject({
      origins: [`https://127.0.0.2:${originPort}`],
      origins_from: "manifest",
    });
    expect((await backend("/call?path=/v1/back")).status).toBe(200);
    expect(originSaw.at(-1)).toMatchObject({ url: "/v1/back", headers: { authorization: `Bearer ${ROTATED}` } });
  });

  it("the value appears in no answer, row, log line or file of the home but its sealed copies", async () => {
    const answers = [
      await (await gw.fetch("/api/secrets")).text(),
      await (await gw.fetch("/api/apps/secret-user")).text(),
      await (await gw.fetch("/api/apps")).text(),
      await (await gw.fetch("/api/security/events?limit=500")).text(),
      await (await gw.fetch("/api/apps/secret-user/logs")).text(),
    ];
    for (const value of [VALUE, ROTATED]) {
      for (const text of answers) expect(text).not.toContain(value);
      expect(filesHolding(home, value)).toEqual([]);
      expect(filesHolding(home, Buffer.from(value).toString("base64"))).toEqual([]);
    }
    expect(readFileSync(join(home, "logs", "gateway.log"), "utf8")).toContain("my key is ***");
  });

  it("egress.extra_ca_certs is a loosening: changing it asks first, clearing it does not", async () => {
    const set = (value: string, confirm = false) =>
      gw.fetch("/api/config/personalclaw", {
        method: "PATCH",
        headers: json,
        body: JSON.stringify({ path: "egress.extra_ca_certs", value, ...(confirm ? { confirm } : {}) }),
      });
    const asked = await set("/etc/other-ca.pem");
    expect(asked.status).toBe(400);
    expect(await errorCode(asked)).toBe("confirmation_required");
    expect(JSON.parse(readFileSync(join(home, "config.json"), "utf8")).egress.extra_ca_certs).toBe(certs.caPath);
    expect((await set("")).status).toBe(200);
    expect((await set("relative/ca.pem", true)).status).toBe(400);
    expect((await set(certs.caPath, true)).status).toBe(200);
    expect(JSON.parse(readFileSync(join(home, "config.json"), "utf8")).egress.extra_ca_certs).toBe(certs.caPath);
  });
});
