// The bridge's /sources/ operations for the dashboard: a spec generated into the quarantine by the
// one function `apps add` uses (sources/generate-from-source.ts), a page of a configured MCP
// Registry, and what each installed app's source offers now. Resolving and fetching happen here,
// never in the worker; the owner's choices are read by the same parsers as the CLI's flags.
import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { isAbsolute } from "node:path";
import { GatewayError } from "../../kernel/contracts/errors";
import { folderEnvName } from "../../kernel/contracts/folder-grants";
import type { SourceStageRequest } from "../../kernel/contracts/package-sources";
import { readOwnerConfig, type OwnerConfig } from "../owner-config";
import { generateFromSource, parseSourceSpec } from "../sources/generate-from-source";
import { checkInstalledSources } from "../sources/installed-source";
import { parseEnvAssignment, parseFolderNeed, parseServerArgument, type OwnerChoices } from "../sources/npm-app";
import { listRegistryEntries } from "../sources/registry-listing";
import type { HandlersUnder } from "../bridge-contract";
import type { BridgeRuntime } from "../bridge-runtime";

/** A folder the dashboard staged is kept this long for the owner to read its review and confirm. */
const STAGED_KEPT_MS = 60 * 60 * 1000;

function choiceRefused(kind: string, text: string, reason: string): GatewayError {
  return new GatewayError("bad_request", { vars: { reason: `${kind} '${text.slice(0, 100)}' ${reason}` } });
}

/** The owner's choices as `apps add` reads its --env, --folder and --arg flags; a choice it would refuse is bad_request. */
export function choicesOfRequest(request: SourceStageRequest): OwnerChoices {
  const read = <T>(
    kind: string,
    texts: string[] | undefined,
    parse: (t: string) => { ok: true; value: T } | { ok: false; reason: string },
  ) =>
    (texts ?? []).map((text) => {
      const parsed = parse(text);
      if (!parsed.ok) throw choiceRefused(kind, text, parsed.reason);
      return parsed.value;
    });
  const folders = read("the folder need", request.folders, parseFolderNeed);
  const seen = new Set<string>();
  for (const { name } of folders) {
    if (seen.has(folderEnvName(name)))
      throw choiceRefused("the folder need", name, "is named twice (case and - or _ aside)");
    seen.add(folderEnvName(name));
  }
  return {
    env: read("the variable", request.env, parseEnvAssignment),
    folders,
    args: read("the argument", request.args, parseServerArgument),
  };
}

function ownerInstallSettings(home: string): OwnerConfig["install"] {
  const config = readOwnerConfig(home);
  if (!config.ok) throw new GatewayError("config_file_invalid", { vars: { reason: config.reason } });
  return config.config.install;
}

export function sourceOperations(rt: BridgeRuntime): HandlersUnder<"/sources/"> {
  const { paths } = rt.opts;
  /** The folders this bridge staged for the dashboard, and when: each goes an hour later (and at every start). */
  const staged = new Map<string, number>();
  const sweepStaged = async (now: number) => {
    for (const [folder, at] of staged)
      if (now - at > STAGED_KEPT_MS) {
        staged.delete(folder);
        await rm(folder, { recursive: true, force: true });
      }
  };
  return {
    "POST /sources/stage": async ({ body }) => {
      const source = parseSourceSpec(body.spec);
      // The bridge's working folder means nothing to the owner: a bundle on this machine is named by its whole path.
      if (source.kind === "mcpb" && !/^https?:\/\//i.test(source.location) && !isAbsolute(source.location))
        throw new GatewayError("source_spec_invalid", {
          vars: { spec: body.spec.slice(0, 300), reason: "a bundle on this machine is named by its absolute path" },
        });
      const choices = choicesOfRequest(body);
      await sweepStaged(Date.now());
      // A folder of its own: a CLI `apps add` of the same bytes removes its folder when it ends.
      const tag = `staged-${randomBytes(6).toString("hex")}`;
      const generated = await generateFromSource(paths.home, body.spec, choices, paths.home, tag);
      staged.set(generated.folder, Date.now());
      return { name: generated.name, source: generated.folder };
    },
    "POST /sources/registry": async ({ body }) =>
      listRegistryEntries({ registries: ownerInstallSettings(paths.home).mcp_registries, ...body }),
    "POST /sources/check": async ({ body }) => ({
      apps: await checkInstalledSources(body.apps, { appsDir: paths.apps, install: ownerInstallSettings(paths.home) }),
    }),
  };
}
