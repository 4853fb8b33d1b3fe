// The one registry of error codes. Codes are append-only and never reworded: clients key on
// `code`. A message is a sentence template; `{name}` is filled from the thrower's vars
// (errorMessage, in errors.ts beside the one error type that carries a code).
import { PACKAGE_SOURCE_ERROR_CODES } from "./source-error-codes";
import { SETTING_SECRET_ERROR_CODES } from "./setting-secret-error-codes";

export const ERROR_CODES = {
  bad_request: { status: 400, message: "The request is not readable: {reason}." },
  field_not_a_boolean: { status: 400, message: "The field '{field}' must be JSON true or false." },
  unsupported_media_type: { status: 415, message: "A state-changing request must send an application/json body." },
  body_too_large: { status: 413, message: "The request body is larger than the {limit}-byte limit." },
  not_found: { status: 404, message: "There is no route {method} {path}." },
  internal_error: {
    status: 500,
    message: "The gateway failed while handling this request; the gateway log has the detail.",
  },
  revision_required: {
    status: 428,
    message: "This write replaces a whole document: send If-Match with the revision you read.",
  },
  stale_write: {
    status: 409,
    message: "The document changed since you read it; read it again and re-apply your change.",
  },
  host_not_allowed: { status: 403, message: "The Host header does not name this gateway." },
  origin_not_allowed: {
    status: 403,
    message:
      "Another site's page may not reach this gateway's API, an app's backend or an app's page, and a change must come from the gateway's own origin.",
  },
  internal_route_refused: { status: 403, message: "The internal credential does not open {method} {path}." },
  internal_secret_invalid: { status: 403, message: "The internal credential is not the one this start issued." },
  internal_call_names_no_work: { status: 403, message: "An internal call must name its work in X-PersonalClaw-Work." },
  internal_only_route: { status: 403, message: "{method} {path} is for the gateway's own processes only." },
  bridge_unavailable: { status: 502, message: "The host bridge did not answer: {reason}." },
  // App bundles: manifest validation, staging, scan and preview (host-bridge/staging, scan, install).
  manifest_missing: { status: 422, message: "The bundle has no app.json at its root." },
  manifest_invalid: { status: 422, message: "The manifest field '{field}' is not valid: {reason}." },
  manifest_path_escapes: {
    status: 422,
    message: "The manifest field '{field}' names a path that is rooted or climbs out of the app folder.",
  },
  manifest_native_refused: {
    status: 422,
    message: "Only the packaged native folder may declare 'native': true; this bundle does.",
  },
  app_name_reserved: { status: 422, message: "The app name '{name}' is reserved by the gateway." },
  core_incompatible: { status: 422, message: "This PersonalClaw cannot host the app: {reason}. Update PersonalClaw." },
  bundle_source_invalid: { status: 422, message: "The bundle source is not a readable folder: {reason}." },
  bundle_unreadable: { status: 422, message: "The bundle entry '{path}' could not be read: {reason}." },
  bundle_link_absolute: {
    status: 422,
    message: "The link '{path}' is absolute; a bundle may only link to its own files.",
  },
  bundle_link_escapes: { status: 422, message: "The link '{path}' leaves the bundle folder." },
  bundle_link_to_folder: {
    status: 422,
    message: "The link '{path}' points to a folder; only links to files are kept.",
  },
  bundle_link_dangling: { status: 422, message: "The link '{path}' points to nothing in the bundle." },
  bundle_link_loop: { status: 422, message: "The link '{path}' is part of a loop of links." },
  bundle_link_crosses_data: { status: 422, message: "The link '{path}' crosses into or out of data/." },
  bundle_link_into_omitted: { status: 422, message: "The link '{path}' points into a folder that is never installed." },
  bundle_reserved_name_is_link: { status: 422, message: "'{path}' must not be a link." },
  bundle_hardlink_outside: { status: 422, message: "The file '{path}' is a hard link to a file outside the bundle." },
  bundle_special_file: {
    status: 422,
    message: "'{path}' is a {kind}; a bundle may hold only files, folders and links to its own files.",
  },
  bundle_name_invalid: {
    status: 422,
    message: "The name '{path}' holds a NUL, backslash, control character or invalid UTF-8.",
  },
  bundle_name_collision: {
    status: 422,
    message: "The names '{path}' and '{other}' are the same name under Unicode normalisation or letter case.",
  },
  bundle_too_many_files: { status: 422, message: "The bundle holds more than {limit} entries." },
  bundle_too_deep: { status: 422, message: "'{path}' is nested deeper than {limit} folders." },
  bundle_file_too_large: { status: 422, message: "The file '{path}' is larger than {limit} bytes." },
  bundle_too_large: { status: 422, message: "The bundle is larger than {limit} bytes in total." },
  bundle_changed_during_copy: {
    status: 422,
    message: "'{path}' changed between the survey and the copy; nothing was staged.",
  },
  scan_dangerous: {
    status: 422,
    message: "The scan found dangerous content in code the app runs; this bundle cannot be installed.",
  },
  auth_bearer_invalid: {
    status: 403,
    message: "This Bearer token cannot authorize a request on its own; sign in again with `personalclaw token`.",
  },
  auth_credential_conflict: { status: 403, message: "The request carries two different owner tokens; send one." },
  session_signed_out: {
    status: 403,
    message: "This sign-in has ended ({reason}); open a new link from `personalclaw token`.",
  },
  session_expired: {
    status: 403,
    message: "This sign-in has expired ({reason}); open a new link from `personalclaw token`.",
  },
  session_required: {
    status: 403,
    message: "Sign in first ({reason}): run `personalclaw token` and open the link it prints.",
  },
  token_ttl_too_long: { status: 400, message: "A token can last at most 90 days; ask for 90d or less." },
  token_ttl_invalid: {
    status: 400,
    message: "The lifetime '{ttl}' is not a duration; ask for one like 30m, 20h or 7d.",
  },
  fresh_sign_in_required: {
    status: 401,
    message: "This needs a sign-in from the last 10 minutes: open a new link from `personalclaw token` and try again.",
  },
  app_not_permitted: { status: 403, message: "The app '{app}' did not declare access to {path}." },
  backend_door_owner_credential: {
    status: 403,
    message:
      "A request through an app backend's door is that app's work; {carrier} is not accepted there. Call the gateway with the app token the proxy handed the backend.",
  },
  sandbox_unavailable: {
    status: 503,
    message:
      'The sandbox cannot start ({reason}): run `apt-get install bubblewrap`, or set sandbox.mode = "off" in config.json to run app children unsandboxed.',
  },
  app_secret_unwritable: {
    status: 500,
    message: "The backend of '{app}' was not started: its .app_secret could not be written ({reason}).",
  },
  backend_already_running: { status: 409, message: "The backend of '{app}' is already running; stop it first." },
  backend_spawn_failed: { status: 500, message: "The backend of '{app}' could not be started: {reason}." },
  // Security event log (durable/security-log).
  sel_event_invalid: { status: 400, message: "The security event is not valid: {reason}." },
  sel_key_invalid: {
    status: 500,
    message: "The security log key (SEL_KEY) must be 64 hexadecimal characters; the log refuses to run without it.",
  },
  consent_required: {
    status: 409,
    message:
      "Installing needs the owner's consent to exactly these bytes: review them and send their digest as consent.",
  },
  app_exists: { status: 409, message: "An app named '{name}' is already installed." },
  app_not_found: { status: 404, message: "No app named '{name}' is installed." },
  // Folder grants (folder-grants.ts): what the owner may share with an app, checked by the bridge.
  folder_need_not_declared: { status: 404, message: "The app '{name}' declares no folder need '{need}'." },
  folder_grant_not_found: { status: 404, message: "The app '{name}' has no folder granted for '{need}'." },
  folder_grant_wider_than_need: {
    status: 422,
    message: "The need '{need}' asks only to read: its folder can be granted read-only, never read-write.",
  },
  folder_path_invalid: {
    status: 422,
    message: "The folder '{path}' is not an absolute path without '.' or '..' parts.",
  },
  folder_path_missing: { status: 422, message: "There is no folder at '{path}'." },
  folder_path_not_a_folder: { status: 422, message: "'{path}' is not a folder; only a folder can be granted." },
  folder_path_link: {
    status: 422,
    message:
      "'{path}' passes through the link '{link}'; a link is never followed into a grant: choose the folder by its real path.",
  },
  folder_path_refused: { status: 422, message: "The folder '{path}' cannot be granted to an app: {reason}." },
  folder_path_whole_home: {
    status: 422,
    message:
      "'{path}' is a whole home folder: grant a folder inside it, or choose the whole home explicitly (whole_home, --whole-home).",
  },
  folder_path_not_owned: {
    status: 422,
    message: "The folder '{path}' belongs to another user; only a folder of the gateway's owner can be granted.",
  },
  folder_path_unreachable: {
    status: 422,
    message:
      "The app's processes run as '{user}', which cannot {access} '{path}'; PersonalClaw never changes a folder's owner or mode: give '{user}' that access yourself, or choose another folder.",
  },
  folder_grant_changed: {
    status: 409,
    message: "The folder granted for '{need}' cannot be used at this start: {reason}.",
  },
  app_disabled: { status: 409, message: "The app '{name}' is disabled; enable it first." },
  app_locked: {
    status: 400,
    message: "The app '{name}' ships with PersonalClaw and cannot be removed; disable it instead.",
  },
  install_step_failed: {
    status: 422,
    message: "Installing failed at the step '{step}': {reason}. Nothing was installed.",
  },
  install_hook_failed: { status: 422, message: "The app's install hook failed ({reason}). Nothing was installed." },
  install_hook_timeout: {
    status: 422,
    message: "The app's install hook did not finish within {seconds} s. Nothing was installed.",
  },
  app_source_invalid: { status: 400, message: "The source must be an absolute path to a folder on this machine." },
  app_backend_unavailable: { status: 503, message: "The app '{name}' has no healthy backend right now." },
  app_answer_too_large: {
    status: 502,
    message: "The app '{name}' answered more than the {limit} bytes one answer may carry over the edge's link.",
  },
  proxy_path_ambiguous: {
    status: 400,
    message: "The path has an encoded slash, backslash or dot segment that could route differently than it was signed.",
  },
  app_message_not_permitted: { status: 403, message: "The app '{app}' did not declare '{to}' in appMessaging." },
  app_ui_not_found: { status: 404, message: "The app '{name}' declares no UI file at {path}." },
  // browser edge
  request_path_ambiguous: {
    status: 400,
    message: "The request path is encoded ambiguously ({reason}); send it in its plain form.",
  },
  auth_header_malformed: {
    status: 400,
    message: "The Authorization header is not one 'Bearer <token>' credential (RFC 6750): {reason}.",
  },
  auth_cookie_conflict: {
    status: 403,
    message:
      "The request carries {count} copies of the session cookie; one was not set by this gateway. Open a new link from `personalclaw token`.",
  },
  app_redirect_refused: {
    status: 502,
    message:
      "The backend of '{name}' redirected outside /apps/{name}/; the gateway does not follow or pass on such a redirect.",
  },
  app_proxy_loop: {
    status: 508,
    message:
      "The app '{name}' already has {limit} of its own calls through its proxy in flight; a call through its own proxy cannot nest deeper.",
  },
  // install rules
  manifest_key_refused: { status: 422, message: "The manifest key '{key}' is refused: {reason}." },
  manifest_ui_folder_invalid: {
    status: 422,
    message:
      "The manifest field '{field}' must name a file in a sub-folder that holds neither data/ nor the backend's code: {reason}.",
  },
  manifest_npm_not_registry: {
    status: 422,
    message: "The npm package '{spec}' in '{field}' is not a registry name with an exact version or a semver range.",
  },
  bundle_link_in_ui: { status: 422, message: "'{path}' is a link inside the UI folder; UI files must be plain files." },
  bundle_wheel_not_binary: {
    status: 422,
    message: "'{path}' in wheels/ is not a wheel (.whl); pip installs wheels only and never builds a source archive.",
  },
  install_not_recordable: { status: 422, message: "The install cannot be recorded ({reason}). Nothing was installed." },
  parked_data_not_found: { status: 404, message: "No data of an app named '{name}' is parked." },
  parked_data_exists: {
    status: 409,
    message:
      "Data of an earlier '{name}' is already parked; purge it (`personalclaw apps purge {name}`) or uninstall with purge_data.",
  },
  parked_data_not_adoptable: { status: 409, message: "The parked data of '{name}' cannot be adopted: {reason}." },
  native_app_unproven: {
    status: 403,
    message: "'{source}' is not a native app this start staged from the package's own apps/native/ folder.",
  },
  app_message_too_large: { status: 413, message: "A message body may be at most {limit} bytes as JSON." },
  app_inbox_full: { status: 429, message: "The inbox of '{app}' is full ({reason}); it must read its messages first." },
  // egress
  backend_slots_exhausted: {
    status: 503,
    message: "All {slots} backend slots are in use; stop or disable another app to start this one.",
  },
  egress_not_declared: { status: 403, message: "The app's network grant does not name {host}:{port}." },
  egress_address_refused: {
    status: 403,
    message: "{host} resolves only to addresses an app may not reach ({reason}).",
  },
  // approvals
  approval_owner_only: {
    status: 403,
    message: "Only the owner, signed in, answers an approval ({reason}); it is still waiting in the owner's Inbox.",
  },
  approval_not_found: { status: 404, message: "There is no approval '{id}' this caller may see." },
  approval_not_pending: {
    status: 409,
    message: "The approval '{id}' was already answered or expired ({state}); nothing was changed.",
  },
  approval_scope_not_accepted: {
    status: 400,
    message: "The asker of this approval accepts only the scopes {accepted}; '{scope}' is not one of them.",
  },
  approvals_not_declared: {
    status: 403,
    message: "The app '{app}' did not declare permissions.approvals, so it cannot raise approvals.",
  },
  approval_grant_not_found: { status: 404, message: "There is no live grant '{id}'." },
  confirmation_required: {
    status: 400,
    message: '{title}: {change}.{caution} Nothing was written; send the same write with "confirm": true to apply it.',
  },
  // lifecycle
  app_busy: {
    status: 409,
    message: "The app '{name}' is in the middle of another change ({kind}); try again in a moment.",
  },
  app_update_locked: {
    status: 400,
    message: "The app '{name}' ships with PersonalClaw and is updated only with the package.",
  },
  app_update_name_mismatch: {
    status: 422,
    message: "The folder holds the app '{found}', not '{name}'; an update keeps the name.",
  },
  update_unhealthy: {
    status: 422,
    message: "The update of '{name}' was rolled back: {reason}. {kept}",
  },
  update_step_failed: {
    status: 422,
    message: "Updating '{name}' failed at the step '{step}': {reason}. The previous version is kept.",
  },
  update_needs_disk_space: {
    status: 507,
    message:
      "Updating '{name}' needs {needed} free on the disk of the apps folder (twice its data/, {data}, for the copy, and {margin} kept for the gateway) and {free} is free; nothing was changed and the app keeps running. Free some space and try again.",
  },
  app_restart_failed: { status: 422, message: "The backend of '{name}' could not be restarted: {reason}." },
  // faults
  storage_full: {
    status: 507,
    message:
      "The gateway's disk is full ({reason}); nothing was written. Free some space and try again: reads keep working and no restart is needed.",
  },
  app_backend_timeout: { status: 504, message: "The backend of '{name}' did not start answering within {seconds} s." },
  // Settings and secrets: their own module, spread here in place.
  ...SETTING_SECRET_ERROR_CODES,
  // events
  ws_upgrade_required: { status: 426, message: "GET /api/ws is a WebSocket: send Upgrade: websocket." },
  ws_subprotocol_required: {
    status: 400,
    message:
      "A socket that offers subprotocols must offer personalclaw.events.v1 among them: the gateway answers with that one and never echoes a token.",
  },
  ws_origin_not_allowed: {
    status: 403,
    message:
      "A WebSocket to the gateway must come from its own origin, or from an app page's opaque origin with that app's token.",
  },
  ws_too_many_sockets: {
    status: 429,
    message: "The app '{app}' holds {limit} live-event sockets already; close one first.",
  },
  // mcp and jobs
  mcp_server_not_found: { status: 404, message: "No installed app registers an MCP server '{key}'." },
  mcp_server_off: { status: 409, message: "The MCP server '{key}' is turned off; turn it on first." },
  mcp_server_failing: {
    status: 409,
    message:
      "The MCP server '{key}' failed to start {count} times in a row; it starts again once the owner retries (`personalclaw mcp retry {app} {server}`).",
  },
  mcp_server_starting: {
    status: 409,
    message:
      "The MCP server '{key}' is still starting (a first start may take up to 10 minutes); this start waits for it.",
  },
  mcp_definition_changed: {
    status: 409,
    message:
      "The MCP server '{key}' is not the one the owner consented to ({reason}); update the app through `personalclaw apps update` so the owner can review it.",
  },
  mcp_not_stdio: {
    status: 400,
    message:
      "The MCP server '{key}' is a remote ({transport}) server; an agent connects to its URL, nothing is started.",
  },
  mcp_json_unreadable: {
    status: 500,
    message:
      "{path} cannot be read as a JSON server map ({reason}); nothing was written. Fix or move the file and try again.",
  },
  // tool calls through `mcp run` (issue 39): the HTTP refusals, and the MCP errors the agent gets (data.code)
  mcp_tool_not_found: {
    status: 404,
    message: "The server '{key}' has no pinned tool '{tool}' in the install that runs now.",
  },
  mcp_tool_withheld: {
    status: 403,
    message:
      "The tool '{tool}' of '{key}' is withheld ({reason}); the owner sees why in the app's tools (`personalclaw mcp tools {app}`).",
  },
  mcp_tool_denied_by_policy: {
    status: 403,
    message: "The owner's policy denies calls to the tool '{tool}' of '{key}'.",
  },
  mcp_tool_call_denied: { status: 403, message: "The owner denied this call to the tool '{tool}' of '{key}'." },
  mcp_tool_call_expired: {
    status: 408,
    message:
      "The owner did not answer the call to the tool '{tool}' of '{key}' within {seconds} s (mcp.ask_timeout_s).",
  },
  mcp_tool_call_timed_out: {
    status: 504,
    message:
      "The tool '{tool}' of '{key}' did not answer within {seconds} s (mcp.call_timeout_s); the call was cancelled.",
  },
  mcp_tool_answer_too_large: {
    status: 502,
    message: "The answer of '{key}' was larger than {limit} bytes (mcp.max_answer_bytes) and was dropped.",
  },
  // verifiable log
  sel_checkpoints_off: { status: 500, message: "This security log signs no checkpoints." },
  sel_no_checkpoint: {
    status: 404,
    message: "The security log holds no signed checkpoint yet; POST /api/security/checkpoint signs one.",
  },
  witness_checkpoint_invalid: { status: 400, message: "The witness cannot cosign this: {reason}." },
  witness_key_changed: {
    status: 409,
    message: "The witness knows the log {origin} by another key; it cosigns one key per log.",
  },
  witness_rollback: {
    status: 409,
    message: "The witness holds checkpoint {held} of {origin}; checkpoint {offered} does not extend it.",
  },
  witness_full: { status: 507, message: "The witness keeps at most {max} logs and holds no room for {origin}." },
  witness_log_not_admitted: {
    status: 403,
    message:
      "This witness cosigns only logs its owner admitted, and the key {key} is not one: ask the witness's owner to admit it (POST /api/security/witness/admitted).",
  },
  // devices and app logs (dashboard)
  device_name_invalid: {
    status: 400,
    message: "A device name is 1 to {limit} characters of visible text, with no control or format characters.",
  },
  session_not_found: { status: 404, message: "There is no live sign-in '{id}'." },
  // the personalclaw command line: the envelopes it prints under --json (no HTTP answer carries these)
  cli_usage: { status: 400, message: "{problem}; see `{help}`." },
  gateway_not_running: { status: 503, message: "No gateway is running for {home}; start it with: {start}" },
  gateway_not_answering: {
    status: 503,
    message:
      "The gateway is not answering on 127.0.0.1:{port} ({reason}); if it does not answer again within a few seconds, run `{stop}` and then `{start}`.",
  },
  cli_internal_error: { status: 500, message: "`{command}` failed unexpectedly ({reason}); {details}." },
  app_folder_not_empty: { status: 409, message: "{path} exists and is not empty; pick a new folder with --dir." },
  // backup and restore (docs/backup-and-restore.md)
  archive_invalid: {
    status: 422,
    message: "The archive does not verify ({reason}); nothing was restored from it.",
  },
  archive_passphrase_wrong: {
    status: 403,
    message: "The passphrase does not open this archive; nothing was restored from it.",
  },
  gateway_running: {
    status: 409,
    message: "A gateway is running for {home}; a replace restore needs it stopped first: {stop}",
  },
  // Edge mode: the worker on Cloudflare and the links of paired machines (docs/deploy-cloudflare.md).
  edge_mode_off: {
    status: 404,
    message: "This gateway is not an edge worker (PERSONALCLAW_PUBLIC_ORIGIN is not set): it pairs no machine.",
  },
  edge_pairing_refused: {
    status: 403,
    message:
      "The pairing was refused: the pairing secret is not the one this edge was given, none was set, or it was already spent.",
  },
  edge_machine_unknown: { status: 403, message: "No machine with that key is paired with this edge." },
  edge_pairing_code_refused: {
    status: 403,
    message:
      "The pairing code was refused: it is not one the owner created on this edge, it was already used, or it expired.",
  },
  edge_link_upgrade_required: {
    status: 426,
    message: "GET /api/edge/link is a WebSocket offering the personalclaw.link.v1 subprotocol.",
  },
  internal_credential_off_link: {
    status: 403,
    message: "At the edge the internal credential opens nothing: a paired machine's calls come over its link.",
  },
  packages_not_restored: {
    status: 409,
    message:
      "The app '{name}' was restored without its packages and is not started until a start of the gateway installs them: {why}.",
  },
  // Package sources (`apps add`, host-bridge/sources/): their own module, spread here in place.
  ...PACKAGE_SOURCE_ERROR_CODES,
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
