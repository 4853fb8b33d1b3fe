// Write-only secrets (SECR-01/02, issue 18): the owner stores a value, the host bridge seals it
// (host-bridge/secrets/secret-store.ts) and no route ever answers one back — there is no
// per-secret read. The owner assigns a stored secret to an app that declared it in its
// manifest's `secrets`; the bridge seals a copy bound to that app and its consent digest, and
// its backend receives it as an environment variable at its next start. For a secret the app
// never holds (a placeholder its egress broker replaces), the owner may choose at assignment
// the origins its value is written to, among the hosts the app's grant covers (issue 38).
// Rows name secrets, never values; a value passes through this worker only in the PUT body on
// its way to the bridge.
import { appRegistry } from "../../durable/instances";
import {
  ownerOriginsRefusal,
  secretDelivery,
  secretHoldingWords,
  type SecretDeclaration,
} from "../../kernel/contracts/secret-delivery";
import { z } from "zod";
import { GatewayError } from "../../kernel/contracts/errors";
import {
  isReservedSecretName,
  OwnerSecretOriginsSchema,
  SECRET_NAME,
  SECRET_VALUE_MAX_CHARS,
  SecretAssignedAnswerSchema,
  SecretDeletedAnswerSchema,
  SecretListingSchema,
  SecretStoredAnswerSchema,
  SecretsAnswerSchema,
  type SecretConsumer,
} from "../../kernel/contracts/secrets";
import { readRecord, requireRecord } from "../app-registry";
import { bridgeCall } from "../bridge-client";
import type { Env } from "../../durable/env";
import { assertOwnerPresence } from "../guards/owner-presence";
import { route } from "../route-row";
import { APP_NAME_PATTERN } from "../../kernel/rules/app-name";

/** The name in the path, refused before anything else happens (SECR-02 reserved prefixes). */
function secretName(raw: string): string {
  const name = raw.slice(0, 80);
  if (isReservedSecretName(name)) throw new GatewayError("secret_name_reserved", { vars: { name } });
  if (!SECRET_NAME.test(name)) throw new GatewayError("secret_name_invalid", { vars: { name } });
  return name;
}

// The value is checked by hand so a refusal can never quote it (a schema's message might).
const PutBody = z.object({ value: z.unknown() }).strict();
const AssignBody = z
  .object({ app: z.string().max(64), as: z.string().max(64).optional(), origins: OwnerSecretOriginsSchema.optional() })
  .strict();
const UnassignBody = AssignBody.omit({ origins: true });
const Empty = z.object({}).strict();
const SecretsAnswer = SecretListingSchema.extend({
  declared: z.array(
    z.strictObject({
      app: z.string(),
      name: z.string(),
      why: z.string(),
      assigned: z.string().nullable(),
      holding: z.string(),
      origins: z.array(z.string()),
      origins_from: z.enum(["manifest", "owner"]),
    }),
  ),
  delivery: z.string(),
}).strict();
const Unassigned = z.array(z.object({ app: z.string(), as: z.string() }));
const SECRET_NAME_REFUSALS = ["secret_name_reserved", "secret_name_invalid"] as const;

async function consumers(env: Env): Promise<SecretConsumer[]> {
  const out: SecretConsumer[] = [];
  for (const name of await appRegistry(env).names()) {
    const record = await readRecord(env, name);
    if (record) out.push({ app: record.name, digest: record.consentDigest });
  }
  return out;
}

/** The origins a placeholder secret is written to for one app: the owner's, where set, else the declared ones. */
function originsNow(declared: SecretDeclaration, ownerSet: readonly string[] | undefined) {
  if (!declared.use || secretDelivery(declared) !== "placeholder") return { origins: [], from: "manifest" as const };
  return ownerSet
    ? { origins: [...ownerSet], from: "owner" as const }
    : { origins: [...declared.use.origins], from: "manifest" as const };
}

/** What each installed app asks for, which stored secret (if any) it has under each name, and where it goes. */
async function declarations(env: Env, listing: z.infer<typeof SecretListingSchema>) {
  const out: z.infer<typeof SecretsAnswer>["declared"] = [];
  for (const app of await appRegistry(env).names()) {
    const record = await readRecord(env, app);
    for (const declared of record?.manifest.secrets ?? []) {
      let assigned: string | null = null;
      let ownerSet: string[] | undefined;
      for (const s of listing.secrets) {
        const use = s.used_by.find((u) => u.app === app && u.as === declared.name);
        if (use) [assigned, ownerSet] = [s.name, use.origins];
      }
      const now = originsNow(declared, ownerSet);
      out.push({
        app,
        name: declared.name,
        why: declared.why,
        assigned,
        // Who holds it and where it goes, in the review's own words.
        holding: secretHoldingWords(declared, now.from === "owner" ? now.origins : undefined),
        origins: now.origins,
        origins_from: now.from,
      });
    }
  }
  return out;
}

const AppSecretsAnswer = z.strictObject({
  app: z.string(),
  asks: SecretsAnswer.shape.declared,
  stored: z.array(z.string()),
  running: z.boolean(),
  restart_pending: z.boolean(),
});

export const secretRoutes = [
  route({
    method: "GET",
    path: "/api/apps/:name/secrets",
    family: "secrets",
    authz: { kind: "owner" },
    internal: true,
    contract:
      "One app's secrets panel — never a value: `asks`, each secret its manifest asks for with why, the stored secret assigned to it (or null), who holds it and where it goes; `stored`, the names of the owner's stored secrets one could assign; `running`, whether its backend runs; and `restart_pending`, true when its running backend holds other secrets than a start now would give it (an assignment, a taking back or a replaced value since it started).",
    answer: { schema: AppSecretsAnswer },
    refuses: ["app_not_found", "secret_store_unreadable", "bridge_unavailable"],
    async handle({ env, params }) {
      const record = await requireRecord(env, params.name);
      const listing = await bridgeCall(env, "POST /secrets/list", {});
      const pending = await bridgeCall(env, "POST /secrets/pending", {
        name: record.name,
        manifest: record.manifest,
        digest: record.consentDigest,
      });
      return {
        app: record.name,
        asks: (await declarations(env, listing)).filter((d) => d.app === record.name),
        stored: listing.secrets.filter((s) => s.stored).map((s) => s.name),
        running: pending.running,
        restart_pending: pending.restartPending,
      };
    },
  }),
  route({
    method: "GET",
    path: "/api/secrets",
    family: "secrets",
    authz: { kind: "owner" },
    internal: true,
    contract:
      "Names, presence and consumers of the owner's secrets — never a value, and there is no per-secret read (SECR-01): `secrets` [{name, stored, used_by: [{app, as, origins?}]}] and `declared` [{app, name, why, assigned, holding, origins, origins_from}], what each installed app asks for, whether it holds the value or a placeholder, and the origins the value is written to now (`origins_from`: the manifest's, or ones the owner set at assignment). `delivery` says how a value reaches an app.",
    answer: { schema: SecretsAnswer },
    refuses: ["secret_store_unreadable", "bridge_unavailable"],
    async handle({ env }) {
      const listing = await bridgeCall(env, "POST /secrets/list", {});
      return {
        ...listing,
        declared: await declarations(env, listing),
        delivery:
          "environment variable at the backend's start (restart the app after assigning): the value, or for a secret the app declared `use` for a placeholder its egress broker replaces with the current value on the way to the declared origins",
      } satisfies z.input<typeof SecretsAnswerSchema>;
    },
  }),
  route({
    method: "PUT",
    path: "/api/secrets/:name",
    family: "secrets",
    authz: { kind: "owner" },
    internal: true,
    body: PutBody,
    contract:
      'Stores or replaces a secret from {"value": "..."}, sealed at rest; the value is never echoed. A replaced value is sealed again for every app it is assigned to (their backends get it at their next start). 400 secret_name_reserved for PCSECRET_/PCPROJ_ names, secret_name_invalid, secret_value_invalid.',
    answer: { schema: z.strictObject({ name: z.string(), stored: z.literal(true), replaced: z.boolean() }) },
    refuses: [...SECRET_NAME_REFUSALS, "secret_value_invalid", "secret_store_unreadable", "bridge_unavailable"],
    async handle(req) {
      const name = secretName(req.params.name);
      const value = req.body.value;
      if (
        typeof value !== "string" ||
        value.length === 0 ||
        value.length > SECRET_VALUE_MAX_CHARS ||
        value.includes("\0")
      ) {
        throw new GatewayError("secret_value_invalid", { vars: { limit: SECRET_VALUE_MAX_CHARS } });
      }
      const stored = await bridgeCall(req.env, "POST /secrets/put", {
        name,
        value,
        consumers: await consumers(req.env),
      });
      await req.audit({
        kind: "secret_stored",
        outcome: "allowed",
        subject: name,
        detail: { replaced: stored.replaced, resealed: stored.resealed },
      });
      return { name, stored: true, replaced: stored.replaced } satisfies z.input<typeof SecretStoredAnswerSchema>;
    },
  }),
  route({
    method: "DELETE",
    path: "/api/secrets/:name",
    family: "secrets",
    authz: { kind: "owner" },
    internal: true,
    body: Empty,
    contract:
      "Deletes a stored secret and every app's sealed copy of it; 404 secret_not_found when none is stored or assigned; 400 secret_name_reserved for PCSECRET_/PCPROJ_ names.",
    answer: { schema: z.strictObject({ deleted: z.string(), unassigned: Unassigned }) },
    refuses: [...SECRET_NAME_REFUSALS, "secret_not_found", "secret_store_unreadable", "bridge_unavailable"],
    async handle(req) {
      const name = secretName(req.params.name);
      const removed = await bridgeCall(req.env, "POST /secrets/delete", { name });
      if (!removed.deleted && removed.unassigned.length === 0)
        throw new GatewayError("secret_not_found", { vars: { name } });
      await req.audit({
        kind: "secret_deleted",
        outcome: "allowed",
        subject: name,
        detail: { unassigned: removed.unassigned.map((u) => `${u.app}:${u.as}`) },
      });
      return { deleted: name, unassigned: removed.unassigned } satisfies z.input<typeof SecretDeletedAnswerSchema>;
    },
  }),
  route({
    method: "POST",
    path: "/api/secrets/:name/assign",
    family: "secrets",
    authz: { kind: "owner" },
    internal: true,
    body: AssignBody,
    contract:
      "Gives a stored secret to an installed app under a name it declared in its manifest's `secrets` (`as`, default the secret's own name): sealed for that app and its consent digest only. For a secret the app never holds, `origins` (1-8 https origins, each covered by the app's consented network grant) replaces the manifest's `use.origins` as where its egress broker writes the value, from the next request on (no restart); assigning again without `origins` returns to the declared ones. Hands a credential to third-party code and says where it may go, so it needs owner presence (401 fresh_sign_in_required). 409 secret_not_declared, secret_origins_not_brokered (the app holds that value), secret_origin_not_granted; 400 secret_origin_invalid; 404 secret_not_found. A backend holding the value gets it at its next start.",
    answer: {
      schema: z.strictObject({
        name: z.string(),
        app: z.string(),
        as: z.string(),
        origins: z.array(z.string()),
        applies: z.string(),
      }),
    },
    refuses: [
      ...SECRET_NAME_REFUSALS,
      "app_not_found",
      "secret_not_declared",
      "secret_origins_not_brokered",
      "secret_origin_invalid",
      "secret_origin_not_granted",
      "fresh_sign_in_required",
      "secret_not_found",
      "secret_store_unreadable",
      "bridge_unavailable",
    ],
    async handle(req) {
      const name = secretName(req.params.name);
      const record = await requireRecord(req.env, req.body.app);
      const as = req.body.as ?? name;
      const declared = (record.manifest.secrets ?? []).find((s) => s.name === as);
      if (!declared)
        throw new GatewayError("secret_not_declared", { vars: { app: record.name, name: as.slice(0, 64) } });
      const { origins } = req.body;
      const refused =
        origins && ownerOriginsRefusal(record.name, declared, origins, record.manifest.permissions?.network);
      if (refused) throw new GatewayError(refused.code, { vars: refused.vars });
      assertOwnerPresence(req);
      await bridgeCall(req.env, "POST /secrets/assign", {
        name,
        as,
        consumer: { app: record.name, digest: record.consentDigest },
        ...(origins ? { origins } : {}),
      });
      const now = originsNow(declared, origins);
      await req.audit({
        kind: "secret_assigned",
        outcome: "allowed",
        subject: name,
        detail: {
          app: record.name,
          as,
          ...(now.origins.length ? { origins: now.origins, origins_from: now.from } : {}),
        },
      });
      return {
        name,
        app: record.name,
        as,
        origins: now.origins,
        applies:
          secretDelivery(declared) === "placeholder"
            ? "at once: its egress broker writes the current value into requests to these origins from the next request"
            : "at the app's next backend start (`personalclaw apps restart <name>`)",
      } satisfies z.input<typeof SecretAssignedAnswerSchema>;
    },
  }),
  route({
    method: "POST",
    path: "/api/secrets/:name/unassign",
    family: "secrets",
    authz: { kind: "owner" },
    internal: true,
    body: UnassignBody,
    contract:
      "Takes a secret back from an app (its sealed copy is deleted): a placeholder stops being replaced at the next request, a value the backend holds is gone at its next start.",
    answer: {
      schema: z.strictObject({ name: z.string(), app: z.string(), as: z.string(), unassigned: z.boolean() }),
    },
    refuses: [...SECRET_NAME_REFUSALS, "app_not_found", "secret_store_unreadable", "bridge_unavailable"],
    async handle(req) {
      const name = secretName(req.params.name);
      const as = req.body.as ?? name;
      const app = z.string().regex(APP_NAME_PATTERN).safeParse(req.body.app);
      if (!app.success) throw new GatewayError("app_not_found", { vars: { name: req.body.app.slice(0, 64) } });
      const result = await bridgeCall(req.env, "POST /secrets/unassign", {
        app: app.data,
        as,
      });
      await req.audit({
        kind: "secret_unassigned",
        outcome: "allowed",
        subject: name,
        detail: { app: app.data, as, held: result.unassigned },
      });
      return { name, app: app.data, as, unassigned: result.unassigned };
    },
  }),
];
