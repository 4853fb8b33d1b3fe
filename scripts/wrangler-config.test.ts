// wrangler.jsonc declares the gateway's worker as Cloudflare's tools read it, while
// `personalclaw start` runs workerd with the config it renders. These tests hold the two to the
// same Durable Object classes, bindings and compatibility date, keep the checked-in binding types
// the ones `wrangler types` writes, and run `wrangler deploy --dry-run` with no network and no
// login, as a deploy would start.
import { describe, expect, it } from "vitest";
import { execa } from "execa";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { unstable_readConfig } from "wrangler";
import { BACKEND_SLOTS, slotBinding } from "../kernel/contracts/backend-slots";
import { workerdConfigFor } from "../host-bridge/cli/start-workerd";
import { renderWorkerdConfig } from "../host-bridge/cli/workerd-config";
import { DURABLE_OBJECT_CLASSES } from "../host-bridge/durable-object-stores";
import { ensureHome } from "../host-bridge/home";
import { OwnerConfigSchema } from "../host-bridge/owner-config";
import { readSettings } from "../host-bridge/settings";
import type { StartPlan } from "../host-bridge/cli/start-preflight";

const root = fileURLToPath(new URL("..", import.meta.url));
const wranglerBin = join(createRequire(import.meta.url).resolve("wrangler/package.json"), "..", "bin", "wrangler.js");
/** The fields these tests read of wrangler's parsed config (its Config type is not shipped with wrangler). */
interface WranglerConfigView {
  compatibility_date: string;
  durable_objects: { bindings: Array<{ name: string; class_name: string }> };
  migrations: Array<{ tag: string; new_classes?: string[]; new_sqlite_classes?: string[] }>;
  vars: Record<string, unknown>;
  secrets?: { required?: string[] };
  assets?: { directory?: string; binding?: string; run_worker_first?: boolean };
  services?: Array<{ binding: string; service: string; entrypoint?: string }>;
}
const wrangler = unstable_readConfig({ config: join(root, "wrangler.jsonc") }) as WranglerConfigView;

/** Bindings only a local start has: workerd disk services and the backends' UNIX-socket slots. */
const LOCAL_ONLY = [
  "APP_FILES",
  "TOOL_STAMP",
  ...Array.from({ length: BACKEND_SLOTS }, (_, slot) => slotBinding(slot)),
];
/** Values that belong to one local start, not to the worker: the edge gets them another way. */
const PER_START = ["BRIDGE_URL", "GATEWAY_PORT", "STARTED_AT"];

/** The workerd config a default start renders for a fresh home, as `personalclaw start` writes it. */
function renderedWorkerdConfig(): { text: string; bindings: Record<string, string> } {
  const home = mkdtempSync(join(tmpdir(), "pc-wrangler-"));
  try {
    const paths = ensureHome(home);
    const plan = {
      paths,
      selKey: { keyHex: "0f".repeat(32), firstSeed: null },
      config: OwnerConfigSchema.parse({}),
      bindHost: "127.0.0.1",
      port: 10000,
    } as unknown as StartPlan;
    const input = workerdConfigFor(plan, readSettings({ PERSONALCLAW_HOME: home }), {
      runtimeFolder: join(home, "run"),
      secret: "s".repeat(64),
      bridgePort: 41234,
      startedAt: "2026-12-06T00:00:00.000Z",
    });
    return { text: renderWorkerdConfig(input), bindings: input.bindings };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** The gateway worker's section of a rendered capnp config: its classes, binding names and date. */
function gatewayWorker(capnp: string) {
  const worker = capnp.slice(capnp.indexOf("const gateway :Workerd.Worker"));
  const section = (name: string) =>
    worker.slice(worker.indexOf(`${name} = [`), worker.indexOf("],", worker.indexOf(`${name} = [`)));
  return {
    compatibilityDate: /compatibilityDate = "([^"]+)"/.exec(worker)?.[1],
    classes: [...section("durableObjectNamespaces").matchAll(/className = "([^"]+)"/g)].map((m) => m[1]),
    // One binding a line; a service designator's own (name = ...) inside a binding is not one.
    bindings: [...section("bindings").matchAll(/^\s+\(name = "([^"]+)"/gm)].map((m) => m[1]!),
    namespaces: [...section("bindings").matchAll(/\(name = "([^"]+)", durableObjectNamespace = "([^"]+)"\)/g)].map(
      (m) => ({ name: m[1], class_name: m[2] }),
    ),
  };
}

/**
 * Runs wrangler with nothing of this machine's: no Cloudflare credential, an empty home, no
 * metrics, and (unshare -rn) a network namespace holding only a loopback that is down, so it
 * can reach nothing at all.
 */
async function runWrangler(args: string[]): Promise<{ exitCode: number | undefined; output: string }> {
  const home = mkdtempSync(join(tmpdir(), "pc-wrangler-home-"));
  try {
    const answer = await execa("unshare", ["-rn", process.execPath, wranglerBin, ...args], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
        XDG_CONFIG_HOME: join(home, ".config"),
        WRANGLER_SEND_METRICS: "false",
      },
      extendEnv: false,
      reject: false,
    });
    return { exitCode: answer.exitCode, output: `${answer.stdout}\n${answer.stderr}` };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

describe("wrangler.jsonc and the workerd config a start renders", () => {
  const rendered = renderedWorkerdConfig();
  const workerd = gatewayWorker(rendered.text);

  it("run the worker at the same compatibility date", () => {
    expect(workerd.compatibilityDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(wrangler.compatibility_date).toBe(workerd.compatibilityDate);
  });

  it("bind the same Durable Object classes under the same names", () => {
    expect(workerd.classes).toEqual(DURABLE_OBJECT_CLASSES.map((d) => d.className));
    expect(wrangler.durable_objects.bindings).toEqual(workerd.namespaces);
  });

  it("create every class as a SQLite-backed class in numbered migrations v1, v2, ...", () => {
    expect(wrangler.migrations.map((m) => m.tag)).toEqual(wrangler.migrations.map((_, i) => `v${i + 1}`));
    expect(wrangler.migrations.flatMap((m) => m.new_classes ?? [])).toEqual([]);
    expect(wrangler.migrations.flatMap((m) => m.new_sqlite_classes ?? []).sort()).toEqual([...workerd.classes].sort());
  });

  it("name the same bindings, apart from those only a local start has", () => {
    const declared = [
      ...wrangler.durable_objects.bindings.map((b) => b.name),
      wrangler.assets?.binding,
      ...Object.keys(wrangler.vars),
      ...(wrangler.secrets?.required ?? []),
      ...(wrangler.services ?? []).map((s) => s.binding),
    ];
    expect([...declared, ...LOCAL_ONLY].sort()).toEqual([...workerd.bindings].sort());
    expect(new Set(declared).size).toBe(declared.length);
  });

  it("keep the credentials and the pairing secret out of the file: they are secrets set at deploy", () => {
    expect(wrangler.secrets?.required).toEqual(["INTERNAL_SECRET", "SEL_KEY", "PERSONALCLAW_PAIRING_SECRET"]);
  });

  it("wire the link door and the backend door to the worker's own entrypoints, as the workerd config does", () => {
    expect(wrangler.services).toEqual([
      { binding: "LINK_DOOR", service: "personalclaw", entrypoint: "linkDoor" },
      { binding: "APP_DOOR", service: "personalclaw", entrypoint: "backendDoor" },
    ]);
    expect(rendered.text).toContain('(name = "LINK_DOOR", service = (name = "gateway", entrypoint = "linkDoor"))');
    expect(rendered.text).toContain('(name = "APP_DOOR", service = (name = "gateway", entrypoint = "backendDoor"))');
  });

  it("give the edge worker a default start's settings and this package's version", () => {
    for (const [name, value] of Object.entries(rendered.bindings)) {
      if (name in wrangler.vars && !PER_START.includes(name))
        expect([name, wrangler.vars[name]]).toEqual([name, value]);
    }
    const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
    expect(wrangler.vars.VERSION).toBe(version);
  });

  it("send every request to the worker first, so the dashboard's files pass its guards", () => {
    expect(wrangler.assets).toMatchObject({ directory: "web", binding: "ASSETS", run_worker_first: true });
  });
});

describe("wrangler's own tools over the config", () => {
  it("wrangler types finds worker-configuration.d.ts up to date with wrangler.jsonc", async () => {
    const typesFile = readFileSync(join(root, "worker-configuration.d.ts"), "utf8");
    const command = /running `wrangler types ([^`]+)`/.exec(typesFile)?.[1];
    expect(command).toBeDefined();
    const { exitCode, output } = await runWrangler(["types", ...command!.split(" "), "--check"]);
    expect(exitCode, output).toBe(0);
    expect(output).toContain("up to date");
  }, 60_000);

  it("wrangler deploy --dry-run, with no network and no login, uploads the built worker unchanged with its Durable Objects", async () => {
    const outdir = mkdtempSync(join(tmpdir(), "pc-wrangler-out-"));
    try {
      const { exitCode, output } = await runWrangler(["deploy", "--dry-run", "--outdir", outdir]);
      expect(exitCode, output).toBe(0);
      expect(output).toContain("--dry-run: exiting now.");
      for (const { binding, className } of DURABLE_OBJECT_CLASSES)
        expect(output).toMatch(new RegExp(`env\\.${binding} \\(${className}\\)\\s+Durable Object`));
      expect(output).toMatch(/env\.ASSETS\s+Assets/);
      expect(output).toMatch(/Total Upload: [\d.]+ KiB \/ gzip: [\d.]+ KiB/);
      expect(readFileSync(join(outdir, "worker.js")).equals(readFileSync(join(root, "dist", "worker.js")))).toBe(true);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }, 60_000);
});
