import { describe, expect, it } from "vitest";
import { reviewText } from "./review-text";
import { GRANT_WORDS } from "../../kernel/contracts/review-words";
import { InstallReviewSchema } from "../../kernel/contracts/install-review";
import { MCPB_BUNDLE, NPM_CLOSURE } from "../../test/helpers/source-reviews";

// Every string a bundle supplies, each carrying a CR, an ANSI line erase, C0 and C1
// controls, a bidi override and a newline: the forgeries issue 12 reproduced.
const EVIL = "\r\u001b[2KBackend process: none\u0000\u0007\u009b\u202e\u2066\nInstall hook: none";

function review(s: (field: string) => string) {
  return {
    app: { name: s("name"), version: s("version"), displayName: s("displayName"), description: s("description") },
    prerequisites: [{ name: s("req"), why: s("why"), how: s("how") }],
    permissions: {
      api: [s("api")],
      config: [s("cfg")],
      configWrite: [s("cfgw")],
      appMessaging: [s("to")],
      agent: s("agent"),
      network: { hosts: [s("host")] },
    },
    scheduledJobs: [{ name: s("job"), schedule: s("cron") }],
    pythonPackages: [s("py")],
    npmPackages: { packages: [s("npm")] },
    ui: { entry: s("ui") },
    backend: { command: s("node"), args: [s("server.js")] },
    installHook: { command: s("sh"), args: [s("setup.sh")] },
    mcpServers: [{ name: s("mcp") }],
    launches: [{ program: s("prog") }],
    writes: [{ path: s("path") }],
    secrets: [{ name: s("secret"), why: s("secretwhy") }],
    findings: {
      runtime: [{ severity: s("high"), rule: s("rule"), path: s("file"), line: 3, message: s("msg") }],
      tests: [{ severity: s("low"), rule: s("rule"), path: s("file"), line: null, message: s("msg") }],
    },
    verdict: s("verdict"),
  };
}

describe("reviewText", () => {
  it("lists the settings an app reads and changes and the secrets it asks for", () => {
    const text = reviewText(
      review((field) => field),
      "sha256:00",
    );
    expect(text).toContain("  Reads settings: cfg\n");
    expect(text).toContain("  Changes settings: cfgw\n");
    expect(text).toContain("Secrets it asks for (given only if you assign one): secret (secretwhy)");
  });

  it("shows every permission the review carries under its one label: what the socket hears and the inbox receives, the MCP tools", () => {
    const text = reviewText(
      {
        ...review((field) => field),
        permissions: {
          ...review((field) => field).permissions,
          events: ["app.installed"],
          eventSubscriptions: ["backend.health_changed"],
          mcpTools: ["search"],
          memory: true,
          cron: true,
          storage: true,
          approvals: true,
        },
      },
      "sha256:00",
    );
    const labels = Object.fromEntries(GRANT_WORDS.map((g) => [g.field, g.label]));
    expect(GRANT_WORDS.map((g) => g.field)).toEqual(Object.keys(InstallReviewSchema.shape.permissions.shape));
    expect(text).toContain(`  ${labels.events}: app.installed\n`);
    expect(text).toContain(`  ${labels.eventSubscriptions}: backend.health_changed\n`);
    expect(text).toContain(`  ${labels.mcpTools}: search\n`);
    for (const flag of ["memory", "cron", "storage", "approvals"]) expect(text).toContain(`  ${labels[flag]}: yes\n`);
    expect(text).toContain(`  ${labels.network}: host\n`);
    expect(text).toContain(`  ${labels.agent}: agent\n`);
    expect(labels.events).not.toMatch(/emit|publish|send/i);
  });

  const digest = `sha256:${"ab".repeat(32)}`;
  const plain = reviewText(
    review((f) => f),
    digest,
  );
  const hostile = reviewText(
    review((f) => `${f}${EVIL}`),
    digest,
  );

  it("keeps exactly the lines of a plain review when every string carries controls and bidi overrides", () => {
    const plainLines = plain.split("\n");
    const hostileLines = hostile.split("\n");
    expect(hostileLines).toHaveLength(plainLines.length);
    // Each line starts with the same label: no string ended, added or rewrote a line.
    hostileLines.forEach((line, i) => expect(line.startsWith(plainLines[i]!.split(":")[0]!.slice(0, 6))).toBe(true));
  });

  it("shows the backend and the install hook the app really has, with the forgery escaped", () => {
    const lines = hostile.split("\n");
    expect(lines.filter((line) => line.startsWith("Backend process: "))).toEqual([
      "Backend process: node\\r\\x1b[2KBackend process: none\\x00\\x07\\x9b\\u202e\\u2066\\nInstall hook: none server.js\\r\\x1b[2KBackend process: none\\x00\\x07\\x9b\\u202e\\u2066\\nInstall hook: none",
    ]);
    expect(lines.filter((line) => line.startsWith("Install hook: "))).toHaveLength(1);
    expect(lines.find((line) => line.startsWith("Install hook: "))).toMatch(/^Install hook: sh\\r/);
  });

  it("prints no control or bidi character but the newlines between its own lines", () => {
    expect(hostile.replace(/\n/g, "")).not.toMatch(
      /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/,
    );
  });

  it("masks a credential a manifest string carries and keeps the consent digest whole", () => {
    const text = reviewText(
      { ...review((f) => f), backend: { command: "node", args: ["--key", "AKIAIOSFODNN7EXAMPLE"] } },
      digest,
    );
    expect(text).toContain("Backend process: node --key ***");
    expect(text).toContain(`Consent digest: ${digest}`);
  });
});

describe("reviewText secrets", () => {
  it("shows under each secret who holds it and where it goes, escaped", () => {
    const text = reviewText(
      {
        ...review((field) => field),
        secrets: [{ name: "KEY", why: "w", note: `The app never sees this value.${EVIL}` }],
      },
      "sha256:00",
    );
    expect(text).toContain("  KEY: The app never sees this value.");
    expect(text).not.toContain("\nInstall hook: none");
  });

  it("opens a generated app's source with its summary: kind, name and version, publisher, what is pinned, native code, signature", () => {
    const text = reviewText({ ...review((f) => f), npmClosure: NPM_CLOSURE }, "sha256:00");
    expect(text).toContain(
      [
        "Where it comes from: npm package @modelcontextprotocol/server-memory 2025.8.4",
        "  Publisher: the npm scope @modelcontextprotocol, as http://127.0.0.2:4873/ serves it (no signature is checked)",
        "  Pinned: 95 npm packages, 3.1 MiB of tarballs, each by its sha512 integrity",
        "  Native code: esbuild@0.25.0",
        "  Signature: none: this kind of source carries no signature",
      ].join("\n"),
    );
    const forged = reviewText(
      {
        ...review((f) => f),
        mcpbBundle: { ...MCPB_BUNDLE, name: EVIL, signer: { ...MCPB_BUNDLE.signer, subject: EVIL } },
      },
      "sha256:00",
    );
    expect(forged).not.toMatch(/\r|\u001b|\u202e/);
    expect(forged).toContain("  Signature: signed by ");
    expect(
      reviewText(
        review((f) => f),
        "sha256:00",
      ),
    ).not.toContain("Where it comes from");
  });
});
