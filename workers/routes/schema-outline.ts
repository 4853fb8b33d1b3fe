// A JSON Schema as a nested Markdown list a person reads: one line per field with its type, whether
// it is required and its bounds, the fields of an object or of an array's items indented below it.
type Schema = Record<string, unknown>;

const SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

function code(value: unknown): string {
  return `\`${JSON.stringify(value)}\``;
}

/** The bounds and choices of one schema, as words: "1–200 characters", "one of `a`, `b`". */
function bounds(schema: Schema): string[] {
  const words: string[] = [];
  const { minimum, maximum, minLength, maxLength, minItems, maxItems } = schema as Record<string, number | undefined>;
  if (minimum !== undefined && minimum !== -SAFE_INTEGER) words.push(`≥ ${minimum}`);
  if (maximum !== undefined && maximum !== SAFE_INTEGER) words.push(`≤ ${maximum}`);
  if (schema.exclusiveMinimum !== undefined) words.push(`> ${String(schema.exclusiveMinimum)}`);
  if (schema.exclusiveMaximum !== undefined) words.push(`< ${String(schema.exclusiveMaximum)}`);
  if (minLength !== undefined || maxLength !== undefined)
    words.push(`${minLength ?? 0}–${maxLength ?? "∞"} characters`);
  if (minItems !== undefined || maxItems !== undefined) words.push(`${minItems ?? 0}–${maxItems ?? "∞"} items`);
  if (typeof schema.format === "string") words.push(`format ${schema.format}`);
  if (typeof schema.pattern === "string") words.push(`matching \`${schema.pattern}\``);
  if (Array.isArray(schema.enum)) words.push(`one of ${schema.enum.map(code).join(", ")}`);
  if ("const" in schema) words.push(`exactly ${code(schema.const)}`);
  if ("default" in schema) words.push(`default ${code(schema.default)}`);
  return words;
}

function variants(schema: Schema): Schema[] | undefined {
  const list = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  return Array.isArray(list) ? list : undefined;
}

function hasFields(schema: Schema): boolean {
  return (
    (schema.properties !== undefined && Object.keys(schema.properties as Schema).length > 0) ||
    (typeof schema.additionalProperties === "object" &&
      Object.keys(schema.additionalProperties as Schema).length > 0) ||
    variants(schema)?.some(hasFields) === true ||
    (typeof schema.items === "object" && hasFields(schema.items as Schema))
  );
}

/** The type of one schema in a few words: "string", "integer or null", "array of object". */
export function typeWords(schema: Schema): string {
  const alternatives = variants(schema);
  if (alternatives) return [...new Set(alternatives.map(typeWords))].join(" or ");
  if (Array.isArray(schema.type)) return schema.type.join(" or ");
  if (schema.type === "array") {
    const items = schema.items as Schema | undefined;
    return items ? `array of ${typeWords(items)}` : "array";
  }
  if (typeof schema.type === "string") return schema.type;
  if ("const" in schema) return typeof schema.const === "object" ? "null" : typeof schema.const;
  if (Array.isArray(schema.enum)) return "string";
  return "any";
}

function fieldLines(schema: Schema, indent: string): string[] {
  const lines: string[] = [];
  const required = new Set((schema.required as string[] | undefined) ?? []);
  for (const [name, field] of Object.entries((schema.properties as Record<string, Schema> | undefined) ?? {})) {
    lines.push(...entryLines(`\`${name}\``, field, required.has(name) ? "required" : "optional", indent));
  }
  const extra = schema.additionalProperties as Schema | boolean | undefined;
  // A schema that allows anything under other keys (`{}`) says nothing a reader needs.
  if (typeof extra === "object" && Object.keys(extra).length > 0)
    lines.push(...entryLines("any other key", extra, "", indent));
  return lines;
}

/** One line for `schema` under `label`, then what it holds indented below it. */
function entryLines(label: string, schema: Schema, presence: string, indent: string): string[] {
  const words = [typeWords(schema), presence, ...bounds(schema)].filter((word) => word !== "");
  const description = typeof schema.description === "string" ? ` — ${schema.description}` : "";
  return [`${indent}- ${label}: ${words.join(", ")}${description}`, ...innerLines(schema, `${indent}  `)];
}

function innerLines(schema: Schema, indent: string): string[] {
  const alternatives = variants(schema);
  if (alternatives) {
    if (!alternatives.some(hasFields)) return [];
    return alternatives.flatMap((variant, index) => entryLines(`variant ${index + 1}`, variant, "", indent));
  }
  if (schema.type === "array" && typeof schema.items === "object") {
    const items = schema.items as Schema;
    return hasFields(items) ? innerLines(items, indent) : [];
  }
  return fieldLines(schema, indent);
}

/** `schema` as Markdown list lines under a heading line `- <title>: <type>`, indented by `indent`. */
export function schemaOutline(title: string, schema: unknown, indent = ""): string[] {
  const root = schema as Schema;
  const empty = root.type === "object" && !hasFields(root);
  if (empty) return [`${indent}- ${title}: an empty object`];
  return entryLines(title, root, "", indent);
}
