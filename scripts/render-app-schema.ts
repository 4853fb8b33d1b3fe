// Renders docs/app.schema.json, the JSON Schema an editor validates app.json with, from the schema
// the gateway parses every manifest with (npm run docs:app-schema); a test compares the committed
// file with a fresh render byte for byte. It differs from the gateway in one way, on purpose: it
// refuses unknown top-level keys, so an editor flags a typo such as "permision", while the gateway
// keeps such a key and shows it to the owner.
import { z } from "zod";
import { AppManifestSchema } from "../kernel/contracts/manifest";

type SchemaNode = Record<string, unknown>;

/** The review's words on a field (`owner`, `review`) are not JSON Schema; a default becomes words of its description. */
function toEditorKeywords(node: SchemaNode): void {
  const { owner: _owner, review: _review, byDefault, ...rest } = node;
  for (const key of Object.keys(node)) delete node[key];
  Object.assign(node, rest);
  if (typeof byDefault === "string" && byDefault !== "") {
    node.description = `${typeof node.description === "string" ? `${node.description} ` : ""}Default: ${byDefault}.`;
  }
  const children: unknown[] = [
    ...Object.values((node.properties as Record<string, unknown> | undefined) ?? {}),
    node.items,
    ...((node.anyOf as unknown[] | undefined) ?? []),
    node.additionalProperties,
    node.propertyNames,
  ];
  for (const child of children) if (child !== null && typeof child === "object") toEditorKeywords(child as SchemaNode);
}

/** The JSON Schema (draft 2020-12) of app.json, refusing unknown top-level keys. */
export function appJsonSchema(): SchemaNode {
  const generated = z.toJSONSchema(AppManifestSchema, { io: "input", unrepresentable: "any" }) as SchemaNode;
  toEditorKeywords(generated);
  const { $schema, ...body } = generated;
  return {
    $schema,
    title: "PersonalClaw app.json",
    description:
      'The manifest of a PersonalClaw app, generated from the schema the gateway parses it with (docs/manifest.md explains each field). Unknown top-level keys are refused here so an editor catches a misspelt field; the gateway keeps such a key and shows it to the owner. Add "$schema" with a path to this file to have an editor check app.json.',
    ...body,
    additionalProperties: false,
  };
}

if (process.argv[1]?.endsWith("render-app-schema.mjs"))
  process.stdout.write(`${JSON.stringify(appJsonSchema(), null, 2)}\n`);
