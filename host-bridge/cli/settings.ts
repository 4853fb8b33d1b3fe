// `personalclaw config get|set` and `personalclaw secrets set|list|delete|assign`: the same
// routes as the dashboard, as the CLI at this machine (the local secret proves the owner is
// present for a loosening change or an assignment). A secret's value is read from stdin or a
// prompt that does not echo — never from argv, which every local user can read in /proc.
import { z } from "zod";
import { callGateway, parseAnswer, type GatewayAnswer } from "./gateway-client";
import { commandHint } from "./invocation";
import { printRefusal, safeRow } from "./print";
import { safeLine } from "../../kernel/text/text-safety";
import { SettingChangedAnswerSchema, SettingsAnswerSchema, settingAt } from "../../kernel/contracts/owner-settings";
import {
  SecretAssignedAnswerSchema,
  SecretDeletedAnswerSchema,
  SecretStoredAnswerSchema,
  SecretsAnswerSchema,
} from "../../kernel/contracts/secrets";

function leaf(config: Record<string, unknown>, path: string): unknown {
  return path
    .split(".")
    .reduce<unknown>(
      (node, key) => (typeof node === "object" && node !== null ? (node as Record<string, unknown>)[key] : undefined),
      config,
    );
}

/** A refusal as it came, or the parsed 2xx answer: `json` prints the answer as it came. */
function answered<T>(
  answer: GatewayAnswer,
  schema: z.ZodType<T>,
): { ok: true; body: T; raw: unknown } | { ok: false; refusal: GatewayAnswer } {
  const parsed = parseAnswer(answer, schema);
  return parsed.ok ? { ok: true, body: parsed.body, raw: answer.body } : { ok: false, refusal: parsed.answer };
}

export async function runConfigGet(
  home: string,
  path: string | undefined,
  values: { json?: boolean },
): Promise<number> {
  const answer = answered(
    await callGateway(home, "config-get", "GET", "/api/config/personalclaw"),
    SettingsAnswerSchema,
  );
  if (!answer.ok) return printRefusal(answer.refusal, Boolean(values.json));
  const doc = answer.body;
  if (path !== undefined) {
    if (!settingAt(path))
      return printRefusal(
        {
          status: 400,
          body: {
            error: {
              code: "config_path_not_editable",
              message: `'${path}' is not an editable setting; \`${commandHint("config", "get")}\` lists the ones that are.`,
            },
          },
        },
        Boolean(values.json),
      );
    const value = leaf(doc.config, path);
    process.stdout.write(
      `${values.json ? JSON.stringify({ path, value }) : Array.isArray(value) ? value.join(",") : String(value)}\n`,
    );
    return 0;
  }
  if (values.json) {
    process.stdout.write(`${JSON.stringify(doc)}\n`);
    return 0;
  }
  for (const spec of doc.schema) {
    const value = leaf(doc.config, spec.path);
    process.stdout.write(
      `${spec.path}\t${safeLine(JSON.stringify(value))}${spec.security ? "\t(security)" : ""}\n\t${safeLine(spec.meaning)}\n`,
    );
  }
  return 0;
}

/** A setting's value as typed: a number where the setting takes one, a comma list for a list, a duration stays text. */
function typedValue(path: string, text: string): unknown {
  const spec = settingAt(path);
  if (spec?.type === "integer" && /^-?\d+$/.test(text)) return Number(text);
  if (spec?.type === "name_list") return text === "" ? [] : text.split(",").map((s) => s.trim());
  return text;
}

export async function runConfigSet(
  home: string,
  path: string,
  text: string,
  values: { json?: boolean; confirm?: boolean; add?: boolean; remove?: boolean },
): Promise<number> {
  const body: Record<string, unknown> = { path };
  if (values.add) body.add = text;
  else if (values.remove) body.remove = text;
  else body.value = typedValue(path, text);
  if (values.confirm) body.confirm = true;
  const headers: Record<string, string> = {};
  // A whole list is written over the revision it was read at.
  if (body.value !== undefined && settingAt(path)?.type === "name_list") {
    const read = answered(
      await callGateway(home, "config-set", "GET", "/api/config/personalclaw"),
      SettingsAnswerSchema,
    );
    if (!read.ok) return printRefusal(read.refusal, Boolean(values.json));
    headers["If-Match"] = `"${read.body.revisions[path]}"`;
  }
  const answer = answered(
    await callGateway(home, "config-set", "PATCH", "/api/config/personalclaw", body, {
      headers,
      provePresence: true,
    }),
    SettingChangedAnswerSchema,
  );
  if (!answer.ok) {
    const code = printRefusal(answer.refusal, Boolean(values.json));
    if (answer.refusal.body?.error?.code === "confirmation_required" && !values.json)
      process.stderr.write("Nothing was written; run the same command with --confirm to apply it.\n");
    return code;
  }
  if (values.json) process.stdout.write(`${JSON.stringify(answer.raw)}\n`);
  else
    process.stdout.write(`${path} = ${safeLine(JSON.stringify(answer.body.value))}; applies ${answer.body.applies}.\n`);
  return 0;
}

/** The value: piped stdin, or a prompt that does not echo what is typed. */
export async function readSecretValue(name: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks)
      .toString("utf8")
      .replace(/\r?\n$/, "");
  }
  process.stderr.write(`Value for ${name} (not shown): `);
  stdin.setRawMode(true);
  stdin.resume();
  return new Promise((resolvePromise) => {
    let value = "";
    const onData = (data: Buffer) => {
      for (const ch of data.toString("utf8")) {
        if (ch === "\r" || ch === "\n" || ch === "\u0004") {
          stdin.setRawMode(false);
          stdin.pause();
          stdin.off("data", onData);
          process.stderr.write("\n");
          return resolvePromise(value);
        }
        if (ch === "\u0003") process.exit(130);
        if (ch === "\u007f") value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on("data", onData);
  });
}

export async function runSecretsSet(home: string, name: string, values: { json?: boolean }): Promise<number> {
  const value = await readSecretValue(name);
  const answer = answered(
    await callGateway(home, "secrets-set", "PUT", `/api/secrets/${encodeURIComponent(name)}`, { value }),
    SecretStoredAnswerSchema,
  );
  if (!answer.ok) return printRefusal(answer.refusal, Boolean(values.json));
  if (values.json) process.stdout.write(`${JSON.stringify(answer.raw)}\n`);
  else
    process.stdout.write(
      `${answer.body.replaced ? "Replaced" : "Stored"} ${name} (sealed; it is never shown again).\n`,
    );
  return 0;
}

export async function runSecretsList(home: string, values: { json?: boolean }): Promise<number> {
  const answer = answered(await callGateway(home, "secrets-list", "GET", "/api/secrets"), SecretsAnswerSchema);
  if (!answer.ok) return printRefusal(answer.refusal, Boolean(values.json));
  if (values.json) {
    process.stdout.write(`${JSON.stringify(answer.raw)}\n`);
    return 0;
  }
  if (answer.body.secrets.length === 0 && answer.body.declared.length === 0)
    process.stdout.write("No secrets are stored, and no installed app asks for one.\n");
  else if (answer.body.secrets.length === 0) process.stdout.write("No secrets are stored.\n");
  for (const s of answer.body.secrets) {
    const users = s.used_by.map((u) => (u.as === s.name ? u.app : `${u.app} as ${u.as}`)).join(", ");
    process.stdout.write(safeRow([s.name, s.stored ? "stored" : "not stored", users || "no app"]));
  }
  for (const d of answer.body.declared) {
    if (d.assigned === null)
      process.stdout.write(`wanted: ${safeLine(d.app)} asks for ${safeLine(d.name)} (${safeLine(d.why)})\n`);
    process.stdout.write(`  ${safeLine(d.app)} ${safeLine(d.name)}: ${safeLine(d.holding)}\n`);
    if (d.origins_from === "owner")
      process.stdout.write(
        `  (you chose these origins: ${safeLine(d.origins.join(", "))}; \`secrets assign\` without --origin returns to the declared ones)\n`,
      );
  }
  return 0;
}

export async function runSecretsDelete(home: string, name: string, values: { json?: boolean }): Promise<number> {
  const answer = answered(
    await callGateway(home, "secrets-delete", "DELETE", `/api/secrets/${encodeURIComponent(name)}`, {}),
    SecretDeletedAnswerSchema,
  );
  if (!answer.ok) return printRefusal(answer.refusal, Boolean(values.json));
  if (values.json) process.stdout.write(`${JSON.stringify(answer.raw)}\n`);
  else
    process.stdout.write(
      `Deleted ${safeLine(name)}${answer.body.unassigned.length ? `; taken back from ${safeLine(answer.body.unassigned.map((u) => u.app).join(", "))}` : ""}.\n`,
    );
  return 0;
}

export async function runSecretsAssign(
  home: string,
  name: string,
  app: string,
  values: { json?: boolean; as?: string; origin?: string[] },
): Promise<number> {
  const body: { app: string; as?: string; origins?: string[] } = { app };
  if (values.as) body.as = values.as;
  if (values.origin?.length) body.origins = values.origin;
  const answer = answered(
    await callGateway(home, "secrets-assign", "POST", `/api/secrets/${encodeURIComponent(name)}/assign`, body, {
      provePresence: true,
    }),
    SecretAssignedAnswerSchema,
  );
  if (!answer.ok) return printRefusal(answer.refusal, Boolean(values.json));
  if (values.json) process.stdout.write(`${JSON.stringify(answer.raw)}\n`);
  else
    process.stdout.write(
      `${safeLine(app)} gets ${safeLine(name)} as ${safeLine(answer.body.as)} ${safeLine(answer.body.applies)}.\n${
        answer.body.origins.length ? `It is sent only to ${safeLine(answer.body.origins.join(", "))}.\n` : ""
      }`,
    );
  return 0;
}
