// `personalclaw apps new <name> [--python] [--dir DIR]`: a working app folder from the
// package's templates. The name is checked by the manifest's own rule and against the reserved
// names, so a folder this writes is one `apps preview` accepts. It is written into a staging
// folder beside the target and renamed into place: a failure leaves nothing half made.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { AppManifestSchema } from "../../kernel/contracts/manifest";
import { GatewayError } from "../../kernel/contracts/errors";
import { reservedAppNames } from "../reserved-app-names";
import { commandHint } from "./invocation";
import { appTemplatesFolder, nodeSdkFolder, packageRoot, pythonVerifierFile } from "./package-facts";
import { UsageError } from "./usage-error";

const PLACEHOLDER = /__APP_NAME__/g;

/** The SDK files an app vendors: package.json and what it lists in `files`. */
function nodeSdkFiles(): string[] {
  const manifest = JSON.parse(readFileSync(join(nodeSdkFolder, "package.json"), "utf8")) as { files: string[] };
  return ["package.json", ...manifest.files];
}

function writeTemplate(from: string, to: string, name: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) writeTemplate(source, target, name);
    else writeFileSync(target, readFileSync(source, "utf8").replace(PLACEHOLDER, name));
  }
}

export async function runAppsNew(name: string, values: { python?: boolean; dir?: string }): Promise<number> {
  const checked = AppManifestSchema.shape.name.safeParse(name);
  if (!checked.success)
    throw new UsageError(`'${name}' is not an app name: it ${checked.error.issues[0]?.message ?? "is not valid"}`, [
      "apps",
      "new",
    ]);
  if (reservedAppNames(packageRoot).has(name))
    throw new UsageError(`'${name}' is reserved by the gateway's own routes; pick another name`, ["apps", "new"]);
  const folder = resolve(values.dir ?? name);
  if (existsSync(folder) && readdirSync(folder).length > 0) {
    process.stderr.write(
      `personalclaw: ${new GatewayError("app_folder_not_empty", { vars: { path: folder } }).message}\n`,
    );
    return 1;
  }
  const staging = join(dirname(folder), `.${basename(folder)}.new-${process.pid}`);
  try {
    writeTemplate(join(appTemplatesFolder, values.python ? "python" : "node"), staging, name);
    // One UI for both kinds: it only talks to the backend through the gateway.
    writeTemplate(join(appTemplatesFolder, "ui"), join(staging, "ui"), name);
    // The verifier is copied from the package's one source, never kept as a second copy here.
    if (values.python) cpSync(pythonVerifierFile, join(staging, "personalclaw_verify.py"));
    else
      for (const file of nodeSdkFiles())
        cpSync(join(nodeSdkFolder, file), join(staging, "vendor", "app-sdk", file), { recursive: true });
    if (existsSync(folder)) rmSync(folder, { recursive: true });
    renameSync(staging, folder);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  const shown = relative(process.cwd(), folder) || ".";
  process.stdout.write(
    `Created ${shown}/ (${values.python ? "Python" : "Node"} backend). Next:\n` +
      `  ${values.python ? `(cd ${shown} && python3 -m unittest)` : `(cd ${shown} && node --test)`}\n` +
      `  ${commandHint("apps", "preview", folder)}\n` +
      `  ${commandHint("apps", "install", folder, "--yes")}\n` +
      `  ${commandHint("apps", "dev", folder)}\n`,
  );
  return 0;
}
