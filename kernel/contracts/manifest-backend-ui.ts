// The app.json parts that run or are served: the backend process, the setup hooks (commands
// like it), the UI pages, and the rule that keeps the UI folder apart from code and data.
import { z } from "zod";
import { plainBackendPath, resourcePath, shortText } from "./manifest-field-shapes";
import { refusal, type ManifestRefusal } from "./manifest-refusal";
import type { AppManifest } from "./manifest";

/**
 * A command the host bridge spawns as `file, args[]` — never a shell string, so there is no
 * quoting to get wrong and nothing for a shell to expand. Hooks use this same shape.
 */
export const CommandSchema = z.object({
  command: z.string().min(1).max(1024).meta({
    description:
      "The program to run, spawned directly (no shell), in the app's sandbox with its folder as working directory.",
    owner: "The command, as written.",
  }),
  args: z
    .array(z.string().max(4096))
    .max(256)
    .meta({
      description: "Its arguments, one string each; nothing is split, quoted or expanded.",
      owner: "Every argument, as written.",
      byDefault: "none",
    })
    .optional(),
});
export type Command = z.infer<typeof CommandSchema>;

export const BackendSchema = z.object({
  command: z.string().min(1).max(1024).meta({
    description:
      "The backend's program (`node`, `python3`, or a file in the app folder), spawned directly, never through a shell. `python`/`python3` is the app's own venv when it declares Python dependencies.",
    owner: "The command and arguments, as written.",
  }),
  args: z
    .array(z.string().max(4096))
    .max(256)
    .meta({ description: "Its arguments, one string each.", owner: "Every argument.", byDefault: "none" })
    .optional(),
  entryPoint: resourcePath
    .meta({
      description: "The file the backend runs, relative to the app folder; it must not lie inside the UI folder.",
      owner: "The entry point.",
    })
    .optional(),
  // The health path is exempt from the proxy signature, so it must be a plain absolute path.
  healthCheck: plainBackendPath
    .meta({
      description:
        "The path probed with GET every 10 s; it must answer 2xx. It is the one path reached without the proxy signature.",
      owner: "The health path.",
      byDefault: "/health",
    })
    .optional(),
  /** Seconds the proxy waits for the backend to start answering (default 30, at most BACKEND_RESPONSE_TIMEOUT_CEILING_S). */
  responseTimeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(300)
    .meta({
      description:
        "Seconds a proxied request waits for the backend's answer to start before the gateway answers 504 app_backend_timeout.",
      byDefault: "30",
    })
    .optional(),
  /** Seconds a start may take to first answer the health check (default BACKEND_START_TIMEOUT_DEFAULT_S). */
  startTimeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(600)
    .meta({
      description:
        "Seconds the backend has, each time it starts (install, gateway start, restart, an update's health gate), to first answer its health check with 2xx. Past them it is reported unhealthy, and an update is undone. Raise it for a backend that loads a lot before it answers; lower it to learn sooner that an update failed.",
      byDefault: "30",
    })
    .optional(),
});

/** A backend has this long to first answer its health check unless its manifest says otherwise. */
export const BACKEND_START_TIMEOUT_DEFAULT_S = 30;

/** How long this backend has, each time it starts, to first answer its health check with 2xx. */
export function backendStartTimeoutMs(backend: { startTimeoutSeconds?: number | undefined } | undefined): number {
  return (backend?.startTimeoutSeconds ?? BACKEND_START_TIMEOUT_DEFAULT_S) * 1000;
}

/** The proxy waits this long for a backend's answer to start unless its manifest says otherwise. */
export const BACKEND_RESPONSE_TIMEOUT_DEFAULT_S = 30;
/** No manifest can make a request wait longer than this for its answer to start. */
export const BACKEND_RESPONSE_TIMEOUT_CEILING_S = 300;

/** setup hooks: onUpdate is parsed and validated but never executed (MAN-12). */
export const SetupSchema = z.object({
  onInstall: CommandSchema.meta({
    description:
      "Run once in the sandbox, without network, after the files are in place (bounded to 60 s). Make it idempotent.",
    owner: "The command and its time bound.",
  }).optional(),
  onUninstall: CommandSchema.meta({
    description: "Run in the sandbox, without network, before the app is removed (bounded to 60 s).",
    owner: "The command and its time bound.",
  }).optional(),
  onUpdate: CommandSchema.meta({
    description: "Parsed and validated, never run: make `onInstall` idempotent instead.",
    owner: "That it is declared and does not run.",
  }).optional(),
});

export const UiSchema = z.object({
  entry: resourcePath
    .meta({
      description:
        "The UI's first page, in a sub-folder of the app (e.g. `ui/index.html`). That folder is served, inert and sandboxed, at /apps/<name>/; it may not be data/ or an installer folder, nor hold the backend's code.",
      owner: "The UI entry.",
    })
    .optional(),
  pages: z
    .array(
      z.object({
        entryPoint: resourcePath.meta({ description: "A further page, inside the UI folder.", owner: "Each page." }),
        title: shortText(120).meta({ description: "Its title in the dashboard.", owner: "The title." }).optional(),
      }),
    )
    .max(64)
    .meta({ description: "More pages of the UI, listed in the dashboard.", byDefault: "none" })
    .optional(),
});

// ---- The UI folder (issue 11 item 3) ---------------------------------------------------------
// UI files are served to the browser without a credential, so the folder they come from must
// hold nothing else: not the app's data/ (written at run time by the backend), not the folders
// the installer writes or that hold code, and not the backend's own entry point.

/** Folders that may never be, or lie inside, the UI folder: written by the installer or holding code. */
export const NOT_UI_FOLDERS: ReadonlySet<string> = new Set(["data", "venv", ".venv", "node_modules", "wheels"]);

/** The folder holding the UI entry, with a trailing '/', e.g. "ui/" for "ui/index.html"; null without an entry. */
export function uiFolderOf(m: Pick<AppManifest, "ui">): string | null {
  const entry = m.ui?.entry;
  if (entry === undefined || !entry.includes("/")) return null;
  return entry.slice(0, entry.lastIndexOf("/") + 1);
}

function uiFolderRefusal(field: string, reason: string): ManifestRefusal {
  return refusal("manifest_ui_folder_invalid", field, { reason }, { field });
}

/** Refuses a UI entry at the bundle root, in or under data/ or an installer folder, or beside the backend's code. */
export function checkUiFolder(m: AppManifest): ManifestRefusal | null {
  const entry = m.ui?.entry;
  if (entry === undefined) return null;
  const segments = entry.split("/");
  if (segments.some((s) => s === "" || s === "." || s.startsWith(".") || s.includes("\\"))) {
    return uiFolderRefusal(
      "ui.entry",
      `'${entry}' must be a plain relative path of names (no empty, '.', dot-file or backslash segments)`,
    );
  }
  if (segments.length < 2)
    return uiFolderRefusal("ui.entry", `'${entry}' is at the bundle root; put the UI in a sub-folder such as ui/`);
  const folderSegments = segments.slice(0, -1);
  const held = folderSegments.find((s) => NOT_UI_FOLDERS.has(s.toLowerCase()));
  if (held !== undefined)
    return uiFolderRefusal("ui.entry", `'${entry}' lies in ${held}/, which the installer writes or which holds code`);
  const folder = uiFolderOf(m)!;
  const inFolder = (p: string) =>
    p
      .replace(/^(\.\/)+/, "")
      .toLowerCase()
      .startsWith(folder.toLowerCase());
  if (m.backend?.entryPoint !== undefined && inFolder(m.backend.entryPoint)) {
    return uiFolderRefusal(
      "ui.entry",
      `the backend's entry point '${m.backend.entryPoint}' is inside the UI folder ${folder}`,
    );
  }
  const codeArg = (m.backend?.args ?? []).find(inFolder);
  if (codeArg !== undefined)
    return uiFolderRefusal("ui.entry", `the backend runs '${codeArg}', which is inside the UI folder ${folder}`);
  for (const [i, page] of (m.ui?.pages ?? []).entries()) {
    if (!page.entryPoint.startsWith(folder))
      return uiFolderRefusal(`ui.pages[${i}].entryPoint`, `'${page.entryPoint}' is outside the UI folder ${folder}`);
  }
  return null;
}
