// Owner settings, per-app config grants and write-only secrets on the real stack (issue 18):
// a stale revision writes nothing; a loosening write asks through the consent protocol and
// needs the owner present; auth.session_ttl stops at 90 days; an app reads only the settings it
// declared; a secret reaches its app's backend environment and no answer, log line, row or
// plain file of the home; a sealed copy moved into another app's slot opens for nobody.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "./helpers/browser";
import { seriousViolations } from "./helpers/axe";
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  cliPath,
  errorCode,
  gatewayPerSuite,
  makeHome,
  rawRequest,
  repoRoot,
  type RunningGateway,
} from "./helpers/gateway";
import { getFromBackend, install, waitForRow } from "./helpers/backends";
import { filesHolding } from "./helpers/home-files";

const json = { "content-type": "application/json" };
const holder = join(repoRoot, "test", "fixtures", "backend-apps", "secret-holder");
const copier = join(repoRoot, "test", "fixtures", "backend-apps", "secret-copier");
const SECRET = "wx-9f3Kq7Lm2Zp8Rt5Vb1Nc4Hd6";
const SECOND = "cli-sEcReT-7Yh2Jk9Pq4Ws";

const configOf = (gw: RunningGateway) => {
  const file = join(gw.home, "config.json");
  return existsSync(file) ? readFileSync(file, "utf8") : null;
};

function patch(gw: RunningGateway, body: unknown, headers: Record<string, string> = {}) {
  return gw.fetch("/api/config/personalclaw", {
    method: "PATCH",
    headers: { ...json, ...headers },
    body: JSON.stringify(body),
  });
}

async function settings(gw: RunningGateway, headers: Record<string, string> = {}): Promise<any> {
  const response = await gw.fetch("/api/config/personalclaw", { headers });
  expect(response.status).toBe(200);
  return response.json();
}

async function events(gw: RunningGateway, kind: string): Promise<any[]> {
  return (await (await gw.fetch(`/api/security/events?kind=${encodeURIComponent(kind)}&limit=500`)).json()).events;
}

async function appTokenOf(gw: RunningGateway, name: string): Promise<string> {
  const echo = await (await gw.fetch(`/apps/${name}/api/echo`)).json();
  return echo.headers.authorization.replace(/^Bearer /, "");
}

/** Runs the CLI with `input` on its stdin (a secret value never travels in argv). */
function cliWithInput(args: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [cliPath, ...args], { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("close", (code) => resolvePromise({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe("owner settings", () => {
  const gw = gatewayPerSuite();

  it("lists every editable path with its schema and a revision for each whole-document field", async () => {
    const doc = await settings(gw);
    expect(doc.config.auth.session_ttl).toBe(30 * 86_400);
    expect(doc.config.sandbox.mode).toBe("on");
    expect(Object.keys(doc.revisions).sort()).toEqual([
      "install.mcp_registries",
      "sandbox.env_passthrough",
      "sandbox.network_all",
    ]);
    const paths = doc.schema.map((s: any) => s.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "auth.session_ttl",
        "sandbox.mode",
        "sandbox.env_passthrough",
        "sandbox.network_all",
        "sandbox.limits.processes",
        "logs.security_retention_days",
        "proxy.response_timeout_s",
        "gateway.bind_host",
      ]),
    );
    const ttl = doc.schema.find((s: any) => s.path === "auth.session_ttl");
    expect(ttl).toMatchObject({ type: "integer", max: 90 * 86_400, security: true, default: 30 * 86_400 });
    expect(ttl.meaning.length).toBeGreaterThan(20);
  });

  it("a path that is not in the schema is refused and nothing is written", async () => {
    const before = configOf(gw);
    const response = await patch(gw, { path: "security.governance_ceiling", value: "off", confirm: true });
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("config_path_not_editable");
    expect(configOf(gw)).toBe(before);
  });

  it("a whole list written over a stale revision answers 409 and writes nothing; without a revision 428", async () => {
    const before = configOf(gw);
    const stale = await patch(
      gw,
      { path: "sandbox.env_passthrough", value: ["MY_TOOL_HOME"], confirm: true },
      { "if-match": '"0123456789abcdef01234567"' },
    );
    expect(stale.status).toBe(409);
    expect(await errorCode(stale)).toBe("stale_write");
    expect(configOf(gw)).toBe(before);
    const missing = await patch(gw, { path: "sandbox.env_passthrough", value: ["MY_TOOL_HOME"], confirm: true });
    expect(missing.status).toBe(428);
    expect(configOf(gw)).toBe(before);

    const { revisions } = await settings(gw);
    const fresh = await patch(
      gw,
      { path: "sandbox.env_passthrough", value: ["MY_TOOL_HOME"], confirm: true },
      { "if-match": `"${revisions["sandbox.env_passthrough"]}"` },
    );
    expect(fresh.status).toBe(200);
    const answer = await fresh.json();
    expect(answer.value).toEqual(["MY_TOOL_HOME"]);
    expect(answer.revision).not.toBe(revisions["sandbox.env_passthrough"]);
    expect(JSON.parse(configOf(gw)!).sandbox.env_passthrough).toEqual(["MY_TOOL_HOME"]);
    // The revision that was current a moment ago is stale now.
    const again = await patch(
      gw,
      { path: "sandbox.env_passthrough", value: [] },
      { "if-match": `"${revisions["sandbox.env_passthrough"]}"` },
    );
    expect(again.status).toBe(409);
    expect(JSON.parse(configOf(gw)!).sandbox.env_passthrough).toEqual(["MY_TOOL_HOME"]);
  });

  it("a loosening change asks: 400 confirmation_required, or 200 with the asked header; nothing written until confirm", async () => {
    const before = configOf(gw);
    const refused = await patch(gw, { path: "sandbox.network_all", add: "egress-probe" });
    expect(refused.status).toBe(400);
    const body = await refused.json();
    expect(body.error).toMatchObject({
      code: "confirmation_required",
      detail: { field: "sandbox.network_all", consent: "network_all_add", change: "none → egress-probe" },
    });
    const asked = await patch(
      gw,
      { path: "sandbox.network_all", add: "egress-probe" },
      { "x-personalclaw-consent": "ask" },
    );
    expect(asked.status).toBe(200);
    expect(asked.headers.get("x-personalclaw-consent-asked")).toBe("1");
    expect(await asked.json()).toEqual(body);
    expect(configOf(gw)).toBe(before);

    const confirmed = await patch(gw, { path: "sandbox.network_all", add: "egress-probe", confirm: true });
    expect(confirmed.status).toBe(200);
    expect(confirmed.headers.get("x-personalclaw-consent-asked")).toBeNull();
    expect(JSON.parse(configOf(gw)!).sandbox.network_all).toEqual(["egress-probe"]);
    // Removing a name tightens: no question.
    const removed = await patch(gw, { path: "sandbox.network_all", remove: "egress-probe" });
    expect(removed.status).toBe(200);
    expect(JSON.parse(configOf(gw)!).sandbox.network_all).toEqual([]);
    const rows = (await events(gw, "settings.changed"))
      .filter((e) => e.subject === "sandbox.network_all")
      .map((e) => [e.detail.from, e.detail.to, e.detail.loosened]);
    expect(rows).toEqual([
      [["egress-probe"], [], false],
      [[], ["egress-probe"], true],
    ]);
  });

  it("auth.session_ttl above 90 days is refused with a sentence naming the limit; 90 days asks and is written with confirm", async () => {
    for (const value of ["91d", 91 * 86_400]) {
      const response = await patch(gw, { path: "auth.session_ttl", value, confirm: true });
      expect(response.status).toBe(400);
      const body = await response.json();
      expect(body.error.code).toBe("setting_value_invalid");
      expect(body.error.message).toContain("90 days");
    }
    expect(configOf(gw) === null || JSON.parse(configOf(gw)!).auth === undefined).toBe(true);
    const asks = await patch(gw, { path: "auth.session_ttl", value: "90d" });
    expect(await errorCode(asks)).toBe("confirmation_required");
    const written = await patch(gw, { path: "auth.session_ttl", value: "90d", confirm: true });
    expect(written.status).toBe(200);
    expect(JSON.parse(configOf(gw)!).auth.session_ttl).toBe(90 * 86_400);
    // Shortening tightens and writes at once.
    expect((await patch(gw, { path: "auth.session_ttl", value: "7d" })).status).toBe(200);
    expect(JSON.parse(configOf(gw)!).auth.session_ttl).toBe(7 * 86_400);
  });

  it("a confirmed loosening from a sign-in older than 10 minutes answers 401 fresh_sign_in_required and writes nothing", async () => {
    const before = configOf(gw);
    const later = String(Date.now() + 11 * 60_000);
    const response = await patch(
      gw,
      { path: "sandbox.limits.processes", value: 512, confirm: true },
      { "x-test-now": later },
    );
    expect(response.status).toBe(401);
    expect(await errorCode(response)).toBe("fresh_sign_in_required");
    expect(configOf(gw)).toBe(before);
    // Tightening needs no presence.
    expect((await patch(gw, { path: "sandbox.limits.processes", value: 128 }, { "x-test-now": later })).status).toBe(
      200,
    );
  });

  it("the sandbox alias keeps its answer and the same rule", async () => {
    const refused = await gw.fetch("/api/settings/sandbox", {
      method: "PATCH",
      headers: json,
      body: JSON.stringify({ mode: "off" }),
    });
    expect((await refused.json()).error).toMatchObject({
      code: "confirmation_required",
      detail: { field: "sandbox.mode", change: "On → Off" },
    });
    const view = await (await gw.fetch("/api/settings/sandbox")).json();
    expect(view.sandbox).toEqual({ mode: "on", processes: 128, memory_mb: 1024 });
  });

  it("a hand edit that fails validation is reported by doctor and refused by the API", async () => {
    const file = join(gw.home, "config.json");
    const good = configOf(gw) ?? "{}";
    writeFileSync(file, JSON.stringify({ ...JSON.parse(good), sandbox: { mode: "maybe" } }));
    try {
      const read = await gw.fetch("/api/config/personalclaw");
      expect(read.status).toBe(409);
      expect(await errorCode(read)).toBe("config_file_invalid");
      const doctor = await cliWithInput(["doctor", "--json", "--home", gw.home], "");
      expect(doctor.code).toBe(1);
      const config = JSON.parse(doctor.stdout).rows.find((row: any) => row.name === "config");
      expect(config).toMatchObject({ status: "fail", message: expect.stringContaining("sandbox.mode") });
    } finally {
      writeFileSync(file, good);
    }
  });

  it("a start over a hand edit that fails validation names the field and does not start", async () => {
    const home = makeHome();
    try {
      writeFileSync(join(home, "config.json"), JSON.stringify({ auth: { session_ttl: "forever" } }));
      const started = await cliWithInput(["start", "--port", "0", "--home", home], "");
      expect(started.code).toBe(1);
      expect(started.stderr).toContain("config.json: auth.session_ttl");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("the CLI reads and writes settings through the same rule", async () => {
    const get = await cliWithInput(["config", "get", "sandbox.limits.memory_mb", "--home", gw.home], "");
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout.trim()).toBe("1024");
    const asked = await cliWithInput(["config", "set", "sandbox.limits.memory_mb", "2048", "--home", gw.home], "");
    expect(asked.code).toBe(1);
    expect(asked.stdout + asked.stderr).toContain("1024 MiB → 2048 MiB");
    expect(JSON.parse(configOf(gw)!).sandbox.limits.memory_mb).toBeUndefined();
    const confirmed = await cliWithInput(
      ["config", "set", "sandbox.limits.memory_mb", "2048", "--confirm", "--home", gw.home],
      "",
    );
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect(JSON.parse(configOf(gw)!).sandbox.limits.memory_mb).toBe(2048);
  });
});

describe("settings applied at start", () => {
  const home = makeHome();
  writeFileSync(join(home, "config.json"), JSON.stringify({ auth: { session_ttl: 2 * 3600 } }));
  const gw = gatewayPerSuite({ home });

  it("a browser sign-in lasts auth.session_ttl from config.json", async () => {
    const opened = await rawRequest(gw.port, {
      path: `/?token=${gw.token}`,
      headers: { host: `127.0.0.1:${gw.port}` },
    });
    expect(opened.status).toBe(302);
    const cookies = ([] as string[]).concat(opened.headers["set-cookie"] ?? []);
    expect(cookies.length).toBe(2);
    for (const cookie of cookies) expect(cookie).toMatch(/; Max-Age=7200$/);
  });
});

describe("config grants and secrets", () => {
  const gw = gatewayPerSuite();

  it("a manifest that declares a security setting is refused at preview; the review lists settings and secrets", async () => {
    const folder = mkdtempSync(join(tmpdir(), "pc-config-grant-"));
    try {
      writeFileSync(
        join(folder, "app.json"),
        JSON.stringify({
          name: "wants-sandbox",
          version: "1.0.0",
          permissions: { api: ["/api/config"], config: { read: ["sandbox.mode"] } },
        }),
      );
      const refused = await gw.fetch("/api/apps/preview", {
        method: "POST",
        headers: json,
        body: JSON.stringify({ source: folder }),
      });
      expect(refused.status).toBe(422);
      const body = await refused.json();
      expect(body.error.code).toBe("manifest_config_security");
      expect(body.error.message).toContain("sandbox.mode");
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
    const preview = await gw.fetch("/api/apps/preview", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ source: holder }),
    });
    expect(preview.status).toBe(200);
    const { review } = await preview.json();
    expect(review.permissions.config).toEqual(["proxy.response_timeout_s", "updates.auto"]);
    expect(review.permissions.configWrite).toEqual(["updates.auto"]);
    expect(review.secrets).toEqual([
      {
        name: "WEATHER_API_KEY",
        why: "to ask the weather service for your forecast",
        appHoldsValue: true,
        sendsTo: [],
        note: "The app holds this value: it can send it to any host its network grant allows. Where it is sent is not declared.",
      },
    ]);
  });

  it("an app token reads only its declared paths and writes only what it declared for writing", async () => {
    await install(gw.home, holder);
    expect((await waitForRow(gw, "secret-holder", (r) => r.healthy))?.healthy).toBe(true);
    const bearer = { authorization: `Bearer ${await appTokenOf(gw, "secret-holder")}` };
    const doc = await settings(gw, bearer);
    expect(doc.config).toEqual({ proxy: { response_timeout_s: 30 }, updates: { auto: "off" } });
    expect(doc.schema.map((s: any) => s.path)).toEqual(["proxy.response_timeout_s", "updates.auto"]);
    expect(doc.revisions).toEqual({});

    const writes = await patch(gw, { path: "updates.auto", value: "staged" }, bearer);
    expect(writes.status).toBe(200);
    expect(JSON.parse(configOf(gw)!).updates.auto).toBe("staged");
    for (const path of ["proxy.response_timeout_s", "sandbox.mode"]) {
      const refused = await patch(gw, { path, value: path === "sandbox.mode" ? "off" : 60, confirm: true }, bearer);
      expect(refused.status).toBe(403);
      expect(await errorCode(refused)).toBe("config_field_not_declared");
    }
    expect(JSON.parse(configOf(gw)!).sandbox).toBeUndefined();
    const refusals = await events(gw, "config_field_not_declared");
    expect(refusals.map((e) => [e.principal, e.subject])).toEqual(
      expect.arrayContaining([
        ["app:secret-holder", "sandbox.mode"],
        ["app:secret-holder", "proxy.response_timeout_s"],
      ]),
    );
    // A path that is no setting at all is refused, and kept, too.
    const notSetting = await patch(gw, { path: "gateway.secret", value: "x" }, bearer);
    expect(notSetting.status).toBe(400);
    expect(await errorCode(notSetting)).toBe("config_path_not_editable");
    expect((await events(gw, "config_path_not_editable")).map((e) => [e.principal, e.subject])).toEqual([
      ["app:secret-holder", "gateway.secret"],
    ]);
    // Secrets are the owner's alone.
    expect((await gw.fetch("/api/secrets", { headers: bearer })).status).toBe(403);
  });

  it("reserved names are refused on store and on delete", async () => {
    for (const name of ["PCSECRET_SIGNING", "PCPROJ_X"]) {
      const put = await gw.fetch(`/api/secrets/${name}`, {
        method: "PUT",
        headers: json,
        body: JSON.stringify({ value: "whatever-value" }),
      });
      expect(put.status).toBe(400);
      expect(await errorCode(put)).toBe("secret_name_reserved");
      const del = await gw.fetch(`/api/secrets/${name}`, { method: "DELETE", headers: json, body: "{}" });
      expect(await errorCode(del)).toBe("secret_name_reserved");
    }
  });

  it("a secret reaches its app's backend environment and no answer, log line, row or plain file of the home", async () => {
    const put = await gw.fetch("/api/secrets/WEATHER_API_KEY", {
      method: "PUT",
      headers: json,
      body: JSON.stringify({ value: SECRET }),
    });
    expect(put.status).toBe(200);
    const putText = await put.text();
    expect(putText).not.toContain(SECRET);
    expect(JSON.parse(putText)).toEqual({ name: "WEATHER_API_KEY", stored: true, replaced: false });
    const undeclared = await gw.fetch("/api/secrets/WEATHER_API_KEY/assign", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ app: "secret-holder", as: "OTHER_KEY" }),
    });
    expect(await errorCode(undeclared)).toBe("secret_not_declared");
    const assigned = await gw.fetch("/api/secrets/WEATHER_API_KEY/assign", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ app: "secret-holder" }),
    });
    expect(assigned.status).toBe(200);
    expect(
      (await gw.fetch("/api/apps/secret-holder/restart", { method: "POST", headers: json, body: "{}" })).status,
    ).toBe(200);
    const row = (await waitForRow(
      gw,
      "secret-holder",
      (r) => r.healthy && r.lastLines.some((l) => l.includes("my key is")),
    ))!;
    const env = JSON.parse((await getFromBackend(gw.home, row, "/env")).body);
    expect(env).toEqual({ has: true, sha256: createHash("sha256").update(SECRET).digest("hex") });
    // Its own log line is masked by value.
    expect(row.lastLines.find((l) => l.includes("my key is"))).toContain("***");

    const answers = [
      await (await gw.fetch("/api/secrets")).text(),
      await (await gw.fetch("/api/apps/secret-holder")).text(),
      await (await gw.fetch("/api/apps")).text(),
      await (await gw.fetch("/api/security/events?limit=500")).text(),
      await (await gw.fetch("/api/config/personalclaw")).text(),
    ];
    for (const text of answers) expect(text).not.toContain(SECRET);
    const listing = JSON.parse(answers[0]);
    expect(listing.secrets).toEqual([
      { name: "WEATHER_API_KEY", stored: true, used_by: [{ app: "secret-holder", as: "WEATHER_API_KEY" }] },
    ]);
    expect(listing.declared).toContainEqual({
      app: "secret-holder",
      name: "WEATHER_API_KEY",
      why: "to ask the weather service for your forecast",
      assigned: "WEATHER_API_KEY",
      holding:
        "The app holds this value: it can send it to any host its network grant allows. Where it is sent is not declared.",
      origins: [],
      origins_from: "manifest",
    });
    const kinds = (await events(gw, "secret_stored")).concat(await events(gw, "secret_assigned"));
    expect(kinds.map((e) => e.subject)).toEqual(["WEATHER_API_KEY", "WEATHER_API_KEY"]);

    // The whole home: no file holds the value, in plain text or base64; the sealed files exist, owner-only.
    expect(filesHolding(gw.home, SECRET)).toEqual([]);
    expect(filesHolding(gw.home, Buffer.from(SECRET).toString("base64"))).toEqual([]);
    const sealed = join(gw.home, "secrets", "apps", "secret-holder", "WEATHER_API_KEY.json");
    expect(JSON.parse(readFileSync(sealed, "utf8"))).toMatchObject({ alg: "aes-256-gcm", secret: "WEATHER_API_KEY" });
    expect(statSync(sealed).mode & 0o777).toBe(0o600);
    expect(statSync(join(gw.home, "secrets.key")).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(gw.home, "logs", "gateway.log"), "utf8")).toContain("my key is ***");
  });

  it("a sealed copy moved into another app's slot fails to open: that app's backend never gets it", async () => {
    await install(gw.home, copier);
    expect((await waitForRow(gw, "secret-copier", (r) => r.healthy))?.healthy).toBe(true);
    const slot = join(gw.home, "secrets", "apps", "secret-copier");
    cpSync(
      join(gw.home, "secrets", "apps", "secret-holder", "WEATHER_API_KEY.json"),
      join(slot, "WEATHER_API_KEY.json"),
      { force: true },
    );
    expect(
      (await gw.fetch("/api/apps/secret-copier/restart", { method: "POST", headers: json, body: "{}" })).status,
    ).toBe(200);
    const row = (await waitForRow(
      gw,
      "secret-copier",
      (r) => r.healthy && r.lastLines.some((l) => l.includes("my key is")),
    ))!;
    expect(JSON.parse((await getFromBackend(gw.home, row, "/env")).body)).toEqual({ has: false, sha256: null });
    const refused = await events(gw, "secret_binding_refused");
    expect(refused.map((e) => [e.subject, e.detail.name])).toContainEqual(["secret-copier", "WEATHER_API_KEY"]);
    expect(filesHolding(gw.home, SECRET)).toEqual([]);
  });

  it("an update keeps the app's secret: its copy is sealed again for the new install's digest", async () => {
    const folder = join(mkdtempSync(join(tmpdir(), "pc-secret-update-")), "secret-holder");
    cpSync(holder, folder, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(folder, "app.json"), "utf8"));
    writeFileSync(join(folder, "app.json"), JSON.stringify({ ...manifest, version: "0.2.0" }));
    const before = readFileSync(join(gw.home, "secrets", "apps", "secret-holder", "WEATHER_API_KEY.json"), "utf8");
    try {
      const updated = await cliWithInput(
        ["apps", "update", "secret-holder", folder, "--yes", "--json", "--home", gw.home],
        "",
      );
      expect(updated.code, updated.stderr + updated.stdout).toBe(0);
    } finally {
      rmSync(join(folder, ".."), { recursive: true, force: true });
    }
    expect(readFileSync(join(gw.home, "secrets", "apps", "secret-holder", "WEATHER_API_KEY.json"), "utf8")).not.toBe(
      before,
    );
    expect(
      (await gw.fetch("/api/apps/secret-holder/restart", { method: "POST", headers: json, body: "{}" })).status,
    ).toBe(200);
    const row = (await waitForRow(
      gw,
      "secret-holder",
      (r) => r.healthy && r.lastLines.some((l) => l.includes("my key is")),
    ))!;
    expect(JSON.parse((await getFromBackend(gw.home, row, "/env")).body)).toEqual({
      has: true,
      sha256: createHash("sha256").update(SECRET).digest("hex"),
    });
    expect(filesHolding(gw.home, SECRET)).toEqual([]);
  });

  it("the CLI sets a secret from stdin (never argv), lists names only, assigns and deletes", async () => {
    const set = await cliWithInput(["secrets", "set", "SECOND_KEY", "--home", gw.home], `${SECOND}\n`);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout + set.stderr).not.toContain(SECOND);
    const list = await cliWithInput(["secrets", "list", "--json", "--home", gw.home], "");
    expect(list.code).toBe(0);
    expect(list.stdout).not.toContain(SECOND);
    expect(JSON.parse(list.stdout).secrets.map((s: any) => s.name)).toEqual(["SECOND_KEY", "WEATHER_API_KEY"]);
    const assign = await cliWithInput(
      ["secrets", "assign", "SECOND_KEY", "secret-holder", "--as", "WEATHER_API_KEY", "--home", gw.home],
      "",
    );
    expect(assign.code, assign.stderr + assign.stdout).toBe(0);
    const del = await cliWithInput(["secrets", "delete", "WEATHER_API_KEY", "--home", gw.home], "");
    expect(del.code, del.stderr).toBe(0);
    const after = JSON.parse((await cliWithInput(["secrets", "list", "--json", "--home", gw.home], "")).stdout);
    expect(after.secrets).toEqual([
      { name: "SECOND_KEY", stored: true, used_by: [{ app: "secret-holder", as: "WEATHER_API_KEY" }] },
    ]);
    expect(existsSync(join(gw.home, "secrets", "apps", "secret-copier", "WEATHER_API_KEY.json"))).toBe(false);
    expect(filesHolding(gw.home, SECOND)).toEqual([]);
  });
});

const BROWSER_SECRET = "browser-typed-Qw8Er4Ty6Ui2";

describe("Settings and Secrets in the dashboard (Chromium)", () => {
  const gw = gatewayPerSuite();
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(10_000);
    page.on("pageerror", (error) => problems.push(error.message));
    page.on("console", (m) => {
      // Non-2xx API answers are logged by Chromium itself; the page shows each one.
      if (
        m.type() === "error" &&
        !/Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())
      )
        problems.push(m.text());
    });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("Settings lists each editable path with its meaning; a loosening change opens the consent dialog and writes only on Allow", async () => {
    // Settings and Secrets are the dashboard's Settings page.
    await page.goto(`${gw.url}#/settings`);
    const row = page.locator('#settings tr[data-setting="sandbox.limits.memory_mb"]');
    await row.waitFor();
    const doc = await settings(gw);
    for (const spec of doc.schema) {
      await expect(
        page.locator(`#settings tr[data-setting="${spec.path}"] .setting-meaning`).textContent(),
      ).resolves.toContain(spec.meaning);
    }
    // Words for the owner: no requirement ids, a path as it is written (not shouted), "1 second" not "1 seconds".
    const text = (await page.locator("#settings").textContent()) ?? "";
    expect(text).not.toMatch(/\([A-Z]{2,}-\d{2}/);
    expect(text).not.toMatch(/\b1 (seconds|days|MiB?s)\b/);
    expect(text).toMatch(/Between 1 second and /);
    expect(await row.locator("th").evaluate((th) => getComputedStyle(th).textTransform)).toBe("none");
    await row.locator("input").fill("4096");
    await row.getByRole("button", { name: "Save" }).click();
    const dialog = page.locator('.consent-dialog[data-consent-field="sandbox.limits.memory_mb"]');
    await dialog.waitFor();
    await expect(dialog.locator(".consent-change").textContent()).resolves.toBe("1024 MiB → 4096 MiB");
    await dialog.locator('[data-consent="cancel"]').click();
    expect(configOf(gw)).toBeNull();
    await row.locator("input").fill("4096");
    await row.getByRole("button", { name: "Save" }).click();
    await dialog.locator('[data-consent="allow"]').click();
    await page
      .locator('#settings tr[data-setting="sandbox.limits.memory_mb"] [data-value]', { hasText: "4096 MiB" })
      .waitFor();
    expect(JSON.parse(configOf(gw)!).sandbox.limits.memory_mb).toBe(4096);
    // Tightening saves with no dialog.
    await row.locator("input").fill("512");
    await row.getByRole("button", { name: "Save" }).click();
    await page
      .locator('#settings tr[data-setting="sandbox.limits.memory_mb"] [data-value]', { hasText: "512 MiB" })
      .waitFor();
    expect(await page.locator(".consent-dialog").count()).toBe(0);
  });

  it("Secrets stores a value without ever showing it again, and assigns it to an app that asked", async () => {
    await install(gw.home, holder);
    await page.reload();
    await page.locator('#secrets tr[data-declared="secret-holder:WEATHER_API_KEY"]').waitFor();
    await page.locator("#secret-name").fill("WEATHER_API_KEY");
    await page.locator("#secret-value").fill(BROWSER_SECRET);
    await page.locator("#secret-form").getByRole("button", { name: "Store" }).click();
    await page.locator('#secrets tr[data-secret="WEATHER_API_KEY"]').waitFor();
    expect(await page.locator("#secret-value").inputValue()).toBe("");
    const declared = page.locator('#secrets tr[data-declared="secret-holder:WEATHER_API_KEY"]');
    await declared.getByRole("button", { name: "Assign" }).click();
    await page
      .locator('#secrets tr[data-secret="WEATHER_API_KEY"] [data-used-by]', { hasText: "secret-holder" })
      .waitFor();
    await page.reload();
    await page.locator('#secrets tr[data-secret="WEATHER_API_KEY"]').waitFor();
    for (const input of await page.locator('#secrets input[type="password"]').all())
      expect(await input.inputValue()).toBe("");
    expect(await page.content()).not.toContain(BROWSER_SECRET);
    expect(filesHolding(gw.home, BROWSER_SECRET)).toEqual([]);
    expect(problems).toEqual([]);
  });

  it("for a secret its app never holds, the owner chooses the origins it goes to among the granted hosts", async () => {
    const folder = join(mkdtempSync(join(tmpdir(), "pc-secret-origins-")), "origin-chooser");
    cpSync(holder, folder, { recursive: true });
    writeFileSync(
      join(folder, "app.json"),
      JSON.stringify({
        ...JSON.parse(readFileSync(join(holder, "app.json"), "utf8")),
        name: "origin-chooser",
        permissions: { network: ["api.example.com", "eu.example.com"] },
        secrets: [
          {
            name: "WEATHER_API_KEY",
            why: "the forecast",
            use: { origins: ["https://api.example.com"], header: "Authorization", format: "Bearer {value}" },
          },
        ],
      }),
    );
    await install(gw.home, folder);
    await page.reload();
    const row = page.locator('#secrets tr[data-declared="origin-chooser:WEATHER_API_KEY"]');
    await row
      .locator(".secret-origins", { hasText: "Sent to the declared origins: https://api.example.com" })
      .waitFor();
    const origins = row.getByRole("textbox", { name: /Origins for origin-chooser WEATHER_API_KEY/ });
    // A host outside the grant is refused with its code, and nothing changes.
    await origins.fill("https://elsewhere.example.net");
    await row.getByRole("button", { name: "Assign" }).click();
    await page.locator("#secrets .notice-error .error-code", { hasText: "secret_origin_not_granted" }).waitFor();
    await origins.fill("https://eu.example.com");
    await row.getByRole("button", { name: "Assign" }).click();
    await page.locator("#secrets .notice-info", { hasText: "It is sent only to https://eu.example.com" }).waitFor();
    await row
      .locator(".secret-origins", { hasText: "Sent to the origins you chose: https://eu.example.com" })
      .waitFor();
    const declared = (await (await gw.fetch("/api/secrets")).json()).declared.find(
      (d: any) => d.app === "origin-chooser",
    );
    expect(declared).toMatchObject({ origins: ["https://eu.example.com"], origins_from: "owner" });
    expect(problems).toEqual([]);
  });

  it("an app's page shows what it asks for, assigns a stored secret and restarts it in one action, says when a restart is pending, and its uninstall says the assignment was taken back while the secret stays", async () => {
    const folder = join(mkdtempSync(join(tmpdir(), "pc-secret-panel-")), "panel-holder");
    cpSync(holder, folder, { recursive: true });
    writeFileSync(
      join(folder, "app.json"),
      JSON.stringify({ ...JSON.parse(readFileSync(join(holder, "app.json"), "utf8")), name: "panel-holder" }),
    );
    await install(gw.home, folder);
    const firstValue = "panel-first-Hx7Kq2Lm9Zp4";
    const secondValue = "panel-second-Rt5Vb1Nc4Hd6";
    const store = (value: string) =>
      gw.fetch("/api/secrets/PANEL_KEY", { method: "PUT", headers: json, body: JSON.stringify({ value }) });
    expect((await store(firstValue)).status).toBe(200);
    const envHash = async () => {
      const row = (await waitForRow(gw, "panel-holder", (r) => r.healthy))!;
      return JSON.parse((await getFromBackend(gw.home, row, "/env")).body).sha256 as string | null;
    };
    const sha = (value: string) => createHash("sha256").update(value).digest("hex");
    expect(await envHash()).toBeNull();

    await page.goto(`${gw.url}#/apps/panel-holder`);
    const ask = page.locator('#app-secrets li[data-secret="WEATHER_API_KEY"]');
    await ask.locator(".secret-state", { hasText: "Not assigned" }).waitFor();
    await expect(ask.textContent()).resolves.toContain("to ask the weather service for your forecast");
    await ask.getByLabel("Stored secret for WEATHER_API_KEY").selectOption("PANEL_KEY");
    await ask.getByRole("button", { name: "Assign and restart: WEATHER_API_KEY of panel-holder" }).click();
    await page.locator("#app-secrets .notice-info", { hasText: "its backend was restarted with it" }).waitFor({
      timeout: 30_000,
    });
    await ask.locator(".secret-state", { hasText: "Assigned: PANEL_KEY." }).waitFor();
    expect(await envHash()).toBe(sha(firstValue));
    expect(await page.locator("[data-restart-pending]").count()).toBe(0);

    // A value replaced in Settings reaches the backend only at its next start: the page says so until then.
    expect((await store(secondValue)).status).toBe(200);
    await page.reload();
    const pending = page.locator('[data-restart-pending="panel-holder"]');
    await pending.waitFor();
    expect(await envHash()).toBe(sha(firstValue));
    // The page with its Secrets part and the pending notice passes axe at a phone's width and a laptop's.
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 844 });
      expect(await seriousViolations(page), `app page at ${width} px`).toEqual([]);
      expect(
        await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth),
      ).toBe(true);
    }
    await pending.getByRole("button", { name: "Restart now: panel-holder" }).click();
    await pending.waitFor({ state: "detached", timeout: 30_000 });
    expect(await envHash()).toBe(sha(secondValue));

    // Uninstalled from its page: the Apps page says the data was kept and where, and that the
    // assignment was taken back while the stored secret stays.
    await page.getByRole("button", { name: "Uninstall panel-holder" }).click();
    await page.getByRole("button", { name: "Yes, uninstall panel-holder" }).click();
    const said = page.locator('#apps [data-uninstalled="panel-holder"]');
    await said.waitFor({ timeout: 30_000 });
    await expect(said.locator(".uninstalled-summary").textContent()).resolves.toBe(
      "Uninstalled Secret holder: data kept.",
    );
    await expect(said.locator("[data-secrets-taken-back]").textContent()).resolves.toBe(
      "Its secret assignments were taken back (PANEL_KEY as WEATHER_API_KEY); the stored secrets stay in Settings.",
    );
    const listing = await (await gw.fetch("/api/secrets")).json();
    expect(listing.secrets).toContainEqual({ name: "PANEL_KEY", stored: true, used_by: [] });
    expect(await page.content()).not.toContain(secondValue);
    expect(problems).toEqual([]);
  });
});
