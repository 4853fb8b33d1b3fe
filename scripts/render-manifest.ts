// Renders docs/manifest.md from the app.json schema itself (npm run docs:manifest): every field,
// its type, its default, whether it is required and what the owner's review shows. The words
// live on the schema (`.meta`), so the reference cannot drift from what the gateway parses; a
// test compares the committed file with a fresh render byte for byte.
import { z } from "zod";
import { AppManifestSchema } from "../kernel/contracts/manifest";

interface JsonSchema {
  type?: string;
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  propertyNames?: JsonSchema;
  items?: JsonSchema;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
  pattern?: string;
  description?: string;
  owner?: string;
  byDefault?: string;
  /** The label the install reviews show before a grant (kernel/contracts/review-words.ts). */
  review?: string;
}

export interface ManifestField {
  path: string;
  type: string;
  required: boolean;
  byDefault: string;
  description: string;
  owner: string;
}

function typeText(s: JsonSchema): string {
  if (s.anyOf) return s.anyOf.map(typeText).join(" or ");
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``;
  if (s.enum) return s.enum.map((v) => `\`${JSON.stringify(v)}\``).join(" \\| ");
  switch (s.type) {
    case "string": {
      const bounds = s.maxLength !== undefined ? `, ${s.minLength ?? 0}–${s.maxLength} chars` : "";
      return `string${bounds}`;
    }
    case "integer":
    case "number":
      return `${s.type === "integer" ? "integer" : "number"} ${s.minimum ?? "…"}–${s.maximum ?? "…"}`;
    case "boolean":
      return "JSON `true`/`false`";
    case "array":
      return `list of ${s.items ? typeText(s.items) : "values"}${s.maxItems !== undefined ? ` (at most ${s.maxItems})` : ""}`;
    case "object":
      if (s.additionalProperties && typeof s.additionalProperties === "object" && !s.properties)
        return `map of ${typeText(s.additionalProperties)}`;
      return "object";
    default:
      return "any";
  }
}

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

function objectVariant(s: JsonSchema): JsonSchema | undefined {
  if (s.type === "object" && s.properties) return s;
  return s.anyOf?.find((v) => v.type === "object" && v.properties);
}

/** Every field of the manifest, parents before children, in schema order. */
export function manifestFields(): ManifestField[] {
  const root = z.toJSONSchema(AppManifestSchema, { io: "input", unrepresentable: "any" }) as JsonSchema;
  const out: ManifestField[] = [];
  const visit = (schema: JsonSchema, prefix: string) => {
    const required = new Set(schema.required ?? []);
    for (const [key, field] of Object.entries(schema.properties ?? {})) {
      const path = prefix === "" ? key : `${prefix}.${key}`;
      out.push({
        path,
        type: typeText(field),
        required: required.has(key),
        byDefault: field.byDefault ?? "",
        description: field.description ?? "",
        // A grant is shown under the one label both reviews use, then what they show of it.
        owner: field.review ? `${field.review}: ${lowerFirst(field.owner ?? "")}` : (field.owner ?? ""),
      });
      const nested = objectVariant(field);
      if (nested) visit(nested, path);
      const listed = field.items && objectVariant(field.items);
      if (listed) visit(listed, `${path}[]`);
      if (field.additionalProperties && typeof field.additionalProperties === "object") {
        const mapped = objectVariant(field.additionalProperties);
        if (mapped) visit(mapped, `${path}.<name>`);
      }
    }
  };
  visit(root, "");
  return out;
}

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

export function renderManifestMarkdown(): string {
  const rows = manifestFields().map(
    (f) =>
      `| \`${f.path}\` | ${f.type} | ${f.required ? "yes" : "no"} | ${cell(f.byDefault) || "—"} | ${cell(f.description)} | ${cell(f.owner) || "not shown"} |`,
  );
  return [
    "# app.json reference",
    "",
    "Generated from the schema the gateway parses every manifest with (`npm run docs:manifest`);",
    "a test fails when this file and the schema differ. `docs/app-author-guide.md` explains how",
    "the pieces fit together.",
    "",
    "Every manifest is parsed strictly: a boolean is JSON `true`/`false` and a list is a list",
    "(never coerced), a duplicate key or a `__proto__`, `constructor` or `prototype` key anywhere",
    "refuses the bundle, and a refusal names the field. Unknown top-level keys are kept and shown",
    "to the owner, never trusted. `a[]` is each element of the list `a`; `a.<name>` is each",
    "entry of the map `a`. The last column is what the owner's install review shows for the",
    "field, which the owner consents to.",
    "",
    "`docs/app.schema.json` is the same schema as JSON Schema (draft 2020-12, `npm run docs:app-schema`) for",
    'editors: start app.json with `"$schema": "<relative path to docs/app.schema.json>"` and the editor',
    "checks each field as you type. It refuses unknown top-level keys, so a misspelt field is flagged",
    "there, while the gateway keeps such a key and shows it to the owner.",
    "",
    "| field | type | required | default | what it does | the owner's review shows |",
    "|---|---|---|---|---|---|",
    ...rows,
    "",
  ].join("\n");
}

if (process.argv[1]?.endsWith("render-manifest.mjs")) process.stdout.write(renderManifestMarkdown());
