import { describe, expect, it } from "vitest";
import { buildChildEnv, credentialValuesOf, type ChildEnvOptions } from "./child-env.js";

const parent = {
  PATH: "/usr/local/bin:/usr/bin:/bin",
  HOME: "/home/ada",
  TMPDIR: "/tmp",
  LANG: "en_GB.UTF-8",
  LC_ALL: "en_GB.UTF-8",
  XDG_CONFIG_HOME: "/home/ada/.config",
  TZ: "Europe/London",
  https_proxy: "http://ada:pw@proxy.example:3128",
  NO_PROXY: "localhost,127.0.0.1",
  NODE_EXTRA_CA_CERTS: "/etc/ssl/corp.pem",
  SLACK_BOT_TOKEN: "xoxb-1234567890-abcdefghij",
  AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  AWS_SESSION_TOKEN: "FwoGZXIvYXdzEXAMPLE",
  SSH_AUTH_SOCK: "/tmp/ssh-XXXX/agent.1",
  GNUPGHOME: "/home/ada/.gnupg",
  GIT_ASKPASS: "/usr/bin/askpass",
  OPENAI_API_KEY: "sk-proj-abcdefghijklmnop1234",
  PERSONALCLAW_APP_DATA_DIR: "/somewhere/else",
  PIP_INDEX_URL: "https://ada:pw@pypi.corp/simple",
  PIP_TARGET: "/usr/lib/python3/site-packages",
  PIP_TIMEOUT: "30",
  npm_config_registry: "https://registry.corp/",
  npm_config_prefix: "/usr/local",
  npm_config__authToken: "npm_secret_token_value",
  NPM_CONFIG__AUTH: "YWRhOnB3",
  npm_config_cache: "/home/ada/.npm",
};

function opts(over: Partial<ChildEnvOptions> = {}): ChildEnvOptions {
  return {
    kind: "backend",
    app: { name: "notes", hasStorage: true, dataDir: "/pc/apps/notes/data", secret: "s".repeat(64), port: 4321 },
    home: "/pc",
    workspace: "/pc/workspace",
    gatewayPort: 10000,
    passthrough: [],
    ...over,
  };
}

describe("buildChildEnv", () => {
  it("a backend receives only the allowlist and the four supervisor variables", () => {
    const { env } = buildChildEnv(parent, opts());
    expect(Object.keys(env).sort()).toEqual(
      [
        "HOME",
        "LANG",
        "LC_ALL",
        "NODE_EXTRA_CA_CERTS",
        "NO_PROXY",
        "PATH",
        "PERSONALCLAW_APP_DATA_DIR",
        "PERSONALCLAW_APP_NAME",
        "PERSONALCLAW_APP_SECRET",
        "PERSONALCLAW_GATEWAY_URL",
        "PERSONALCLAW_HOME",
        "PERSONALCLAW_PORT",
        "PERSONALCLAW_WORKSPACE",
        "PORT",
        "TMPDIR",
        "TZ",
        "XDG_CONFIG_HOME",
        "https_proxy",
      ].sort(),
    );
    expect(env.PORT).toBe("4321");
    expect(env.PERSONALCLAW_GATEWAY_URL).toBe(`http://127.0.0.1:${env.PERSONALCLAW_PORT}`);
    expect(env.PERSONALCLAW_APP_NAME).toBe("notes");
    expect(env.PERSONALCLAW_APP_DATA_DIR).toBe("/pc/apps/notes/data");
  });

  it("assigned secrets arrive under their names, never over a name the bridge set, and their values are masked", () => {
    const logged: string[] = [];
    const { env } = buildChildEnv(
      parent,
      opts({
        app: { ...opts().app, secrets: { WEATHER_API_KEY: "wx-value-12345", PORT: "1" } },
        log: (m) => logged.push(m),
      }),
    );
    expect(env.WEATHER_API_KEY).toBe("wx-value-12345");
    expect(env.PORT).toBe("4321");
    expect(logged.join("\n")).toContain("the secret PORT was not set");
    expect(logged.join("\n")).not.toContain("wx-value-12345");
    expect(credentialValuesOf(env)).toContain("wx-value-12345");
  });

  it("a proxy address loses its login and the name is reported, not the value", () => {
    const logged: string[] = [];
    const { env, loginsRemoved } = buildChildEnv(parent, opts({ log: (m) => logged.push(m) }));
    expect(env.https_proxy).toBe("http://proxy.example:3128");
    expect(loginsRemoved).toEqual(["https_proxy"]);
    expect(logged.join("\n")).toContain("https_proxy");
    expect(logged.join("\n")).not.toContain("pw@");
  });

  it("withheld names are logged at debug without their values", () => {
    const logged: string[] = [];
    const { withheld } = buildChildEnv(parent, opts({ log: (m) => logged.push(m) }));
    expect(withheld).toContain("SLACK_BOT_TOKEN");
    expect(withheld).toContain("OPENAI_API_KEY");
    const text = logged.join("\n");
    expect(text).toContain("SLACK_BOT_TOKEN");
    for (const value of [parent.SLACK_BOT_TOKEN, parent.OPENAI_API_KEY, parent.AWS_SECRET_ACCESS_KEY])
      expect(text).not.toContain(value);
  });
});

describe("buildChildEnv: passthrough, storage, secrets and installers", () => {
  it("an operator-declared name passes unchanged, but a floor name never does", () => {
    const { env, withheld } = buildChildEnv(
      parent,
      opts({
        passthrough: [
          "OPENAI_API_KEY",
          "AWS_SECRET_ACCESS_KEY",
          "AWS_SESSION_TOKEN",
          "SSH_AUTH_SOCK",
          "GNUPGHOME",
          "GIT_ASKPASS",
        ],
      }),
    );
    expect(env.OPENAI_API_KEY).toBe(parent.OPENAI_API_KEY);
    for (const floor of ["AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "SSH_AUTH_SOCK", "GNUPGHOME", "GIT_ASKPASS"]) {
      expect(env[floor]).toBeUndefined();
      expect(withheld).toContain(floor);
    }
  });

  it("an app without storage gets no data folder even when the operator declared the name", () => {
    const { env } = buildChildEnv(
      parent,
      opts({
        app: { name: "notes", hasStorage: false, dataDir: "/pc/apps/notes/data" },
        passthrough: ["PERSONALCLAW_APP_DATA_DIR"],
      }),
    );
    expect(env.PERSONALCLAW_APP_DATA_DIR).toBeUndefined();
  });

  it("a child without a secret gets no PERSONALCLAW_APP_SECRET, even one the parent had", () => {
    const { env } = buildChildEnv(
      { ...parent, PERSONALCLAW_APP_SECRET: "inherited-secret" },
      opts({
        kind: "hook",
        app: { name: "notes", hasStorage: false, dataDir: "/d" },
        passthrough: ["PERSONALCLAW_APP_SECRET"],
      }),
    );
    expect(env.PERSONALCLAW_APP_SECRET).toBeUndefined();
    expect(env.PORT).toBeUndefined();
  });

  it("an installer keeps its own settings but not the ones that move where it lands, nor npm logins", () => {
    const { env } = buildChildEnv(parent, opts({ kind: "installer" }));
    expect(env.PIP_TIMEOUT).toBe("30");
    expect(env.PIP_INDEX_URL).toBe("https://pypi.corp/simple");
    expect(env.npm_config_registry).toBe("https://registry.corp/");
    for (const gone of [
      "PIP_TARGET",
      "npm_config_prefix",
      "npm_config__authToken",
      "NPM_CONFIG__AUTH",
      "npm_config_cache",
    ])
      expect(env[gone]).toBeUndefined();
  });

  it("a backend does not get installer settings", () => {
    const { env } = buildChildEnv(parent, opts());
    expect(env.PIP_TIMEOUT).toBeUndefined();
    expect(env.npm_config_registry).toBeUndefined();
  });

  it("a passthrough entry that is not a variable name is a bug and throws", () => {
    expect(() => buildChildEnv(parent, opts({ passthrough: ["A=B"] }))).toThrow(TypeError);
  });

  it("credential values for masking are the secret and passed-through values, not locations", () => {
    const { env } = buildChildEnv(parent, opts({ passthrough: ["OPENAI_API_KEY"] }));
    const values = credentialValuesOf(env);
    expect(values).toContain("s".repeat(64));
    expect(values).toContain(parent.OPENAI_API_KEY);
    expect(values).not.toContain(parent.PATH);
    expect(values).not.toContain("/pc/apps/notes/data");
  });
});
