// What an app tells its owner beyond its grants, shown in the review and compared at every
// update: the programs it launches, the places outside its folder it writes, the prerequisites
// PersonalClaw does not install and the secrets it asks for.
import { z } from "zod";
import { declaredSecretNameRefusal } from "./secrets";
import { checkSecretUses, SecretDeliverySchema, SecretOriginUseSchema } from "./secret-delivery";
import { shortText } from "./manifest-field-shapes";
import { isNpmPackageName } from "./manifest-dependencies";
import { invalidField, type ManifestRefusal } from "./manifest-refusal";
import type { AppManifest } from "./manifest";

export const LAUNCH_INHERITS = ["sign-in", "settings", "auto-approve-rules", "folder-settings"] as const;

export const LaunchedProgramSchema = z.object({
  program: shortText(256).meta({
    description: "A program the app starts (`*` for programs the owner chooses).",
    owner: "The program.",
  }),
  why: shortText(500).meta({ description: "Why the app starts it.", owner: "The reason." }),
  inherits: z
    .array(z.enum(LAUNCH_INHERITS))
    .max(4)
    .meta({
      description:
        "What the program inherits from the owner: `sign-in`, `settings`, `auto-approve-rules`, `folder-settings`.",
      owner: "Each inheritance.",
      byDefault: "nothing",
    })
    .optional(),
  inheritsWhile: z
    .object({
      setting: shortText(128).meta({ description: "A boolean setting.", owner: "The setting." }),
      value: z.boolean().meta({ description: "The value it must have.", owner: "The value." }),
    })
    .meta({ description: "The inheritance holds only while this setting has this value.", owner: "The condition." })
    .optional(),
  hosts: z
    .array(z.string().regex(/^[A-Za-z0-9.-]+$/, "must be a host name"))
    .max(64)
    .meta({
      description: "Hosts the program contacts (a bare domain covers its subdomains).",
      owner: "Every host.",
      byDefault: "none",
    })
    .optional(),
  npmPackage: z
    .string()
    .max(214)
    .meta({
      description: 'For `program: "npx"`: the package npx runs, without a version (each start fetches the newest).',
      owner: "The package.",
    })
    .optional(),
});

/** A secret the app asks the owner for: the environment variable `name` holds it, or its placeholder when it declares where it is used. */
export const DeclaredSecretSchema = z
  .object({
    name: z.string().min(1).max(64).meta({
      description:
        "The environment variable the secret arrives as: capital letters, digits and `_`; names a loader or the bridge reads (`PATH`, `NODE_OPTIONS`, `PERSONALCLAW_*`, `LD_*`, ...) and the prefixes `PCSECRET_`/`PCPROJ_` are refused.",
      owner: "The name.",
    }),
    why: shortText(500).meta({ description: "Why the app needs it.", owner: "The reason." }),
    use: SecretOriginUseSchema.meta({
      description:
        "Where the secret is used: the origins that receive it and the one place in a request it is written (`header` with `format`, `basic`, or `query`).",
      owner: "Every origin and the place.",
      byDefault: "not declared",
    }).optional(),
    delivery: SecretDeliverySchema.meta({
      description:
        "`placeholder`: the app gets a placeholder, its egress broker writes the value into requests to the declared origins only, and `PERSONALCLAW_ORIGIN_<name>` holds the `http://` base URL of the first origin. `env`: the app gets the value itself, and the review says it holds it.",
      owner: "Whether the app holds the value.",
      byDefault: "`placeholder` with `use`, `env` without",
    }).optional(),
  })
  .strict();

export const ExternalWriteSchema = z.object({
  path: shortText(1024).meta({
    description: "A place outside the app folder the app's code writes.",
    owner: "The path.",
  }),
  why: shortText(500).meta({ description: "Why.", owner: "The reason." }),
});

/** A prerequisite PersonalClaw does not install, within the lengths the consent dialog shows. */
export const PrerequisiteSchema = z.object({
  name: shortText(64).meta({
    description: "What the app needs that PersonalClaw does not install (e.g. `Node.js 20`).",
    owner: "The name, first in the review.",
  }),
  why: shortText(200).meta({ description: "Why it is needed.", owner: "The reason." }),
  how: shortText(300).meta({ description: "How the owner gets it.", owner: "The instructions." }),
});

/** Refuses a secret name a loader or the bridge reads, a name declared twice, and a use its grant does not cover. */
export function checkDeclaredSecrets(m: AppManifest): ManifestRefusal | null {
  const seen = new Set<string>();
  for (const [i, secret] of (m.secrets ?? []).entries()) {
    const why = declaredSecretNameRefusal(secret.name);
    if (why) return invalidField(`secrets[${i}].name`, `'${secret.name}' ${why}`);
    if (seen.has(secret.name)) return invalidField(`secrets[${i}].name`, `'${secret.name}' is declared twice`);
    seen.add(secret.name);
  }
  return checkSecretUses(m.secrets ?? [], m.permissions?.network);
}

/** An npx launch names the package npx runs, with no version: consent says each start fetches the newest. */
export function checkNpxLaunches(m: AppManifest): ManifestRefusal | null {
  for (const [i, launch] of (m.launches ?? []).entries()) {
    if (launch.program === "npx") {
      if (launch.npmPackage === undefined)
        return invalidField(`launches[${i}].npmPackage`, "an npx launch must name the npm package npx runs");
      if (!isNpmPackageName(launch.npmPackage)) {
        return invalidField(`launches[${i}].npmPackage`, "must be a bare npm package name without a version");
      }
    }
  }
  return null;
}
