// The error codes of package sources: `apps add npm:`, `pypi:`, an .mcpb bundle and `registry:`
// (host-bridge/sources/).
// Part of the one registry of codes (error-codes.ts spreads them into ERROR_CODES, where they
// stood before): append-only and never reworded, like every code.

export const PACKAGE_SOURCE_ERROR_CODES = {
  source_spec_invalid: {
    status: 400,
    message: "'{spec}' is not a source `apps add` reads: {reason}.",
  },
  source_unreachable: { status: 502, message: "The package source {source} could not be read: {reason}." },
  source_address_refused: {
    status: 403,
    message:
      "The package source {source} resolves to {address} ({range}); only a public address, or a local one the owner named as the source itself, is reached.",
  },
  npm_package_not_found: { status: 404, message: "The npm source has no package '{name}'." },
  npm_version_not_found: {
    status: 404,
    message: "The npm source has no version of '{name}' that satisfies '{range}' (needed by {by}).",
  },
  npm_package_invalid: { status: 422, message: "The npm package {package} cannot be installed here: {reason}." },
  npm_integrity_mismatch: {
    status: 422,
    message:
      "The bytes of the npm package {package} are not the bytes pinned by its integrity {integrity}; nothing was installed.",
  },
  npm_closure_invalid: { status: 422, message: "npm-closure.json is not a pinned npm closure: {reason}." },
  pypi_package_not_found: { status: 404, message: "The PyPI index has no project '{name}'." },
  pypi_version_not_found: {
    status: 404,
    message: "The PyPI index has no pure-Python wheel of '{name}' that satisfies '{range}' (needed by {by}).",
  },
  pypi_package_invalid: { status: 422, message: "The Python package {package} cannot be installed here: {reason}." },
  pypi_hash_mismatch: {
    status: 422,
    message: "The bytes of the wheel {file} are not the bytes its index pins (sha256 {sha256}); nothing was installed.",
  },
  // .mcpb bundles (host-bridge/sources/mcpb-*.ts).
  mcpb_archive_invalid: { status: 422, message: "The .mcpb bundle cannot be read: {reason}." },
  mcpb_entry_refused: { status: 422, message: "The .mcpb bundle's entry '{path}' is refused: {reason}." },
  mcpb_too_large: { status: 422, message: "The .mcpb bundle is too large: {reason}." },
  mcpb_manifest_invalid: { status: 422, message: "The .mcpb bundle's manifest.json cannot be used: {reason}." },
  mcpb_manifest_version_unsupported: { status: 422, message: "The .mcpb manifest_version '{version}' is unknown." },
  mcpb_user_config_refused: { status: 422, message: "The .mcpb user_config field '{field}' is refused: {reason}." },
  mcpb_signature_invalid: {
    status: 422,
    message:
      "The .mcpb bundle's signature is refused: {reason}. A bundle whose signature does not cover its bytes is never installed.",
  },
  mcpb_user_config_sensitive: {
    status: 422,
    message:
      "The .mcpb user_config field '{field}' is sensitive: it is never given on the command line, where it would be written in app.json and shown in the review. Store it with `personalclaw secrets set {name}` and assign it to the app with `personalclaw secrets assign {name} <app>`.",
  },
  // MCP Registry entries (host-bridge/sources/mcp-registry-*.ts).
  mcp_registry_entry_not_found: {
    status: 404,
    message: "No MCP Registry of install.mcp_registries ({registries}) has {name} at version {version}.",
  },
  mcp_registry_answer_invalid: {
    status: 502,
    message: "The MCP Registry {registry} did not answer with a server entry for {name}: {reason}.",
  },
  mcp_registry_version_not_exact: {
    status: 422,
    message:
      "The MCP Registry entry {name} names its {type} package {package} at '{version}', which is not one exact version; nothing is installed from a range.",
  },
  mcp_registry_no_supported_package: {
    status: 422,
    message:
      "The MCP Registry entry {name} has no package this gateway installs (an npm or PyPI package or an .mcpb bundle, run over stdio); it lists: {listed}.",
  },
  mcp_registry_bundle_mismatch: {
    status: 422,
    message:
      "The .mcpb bundle {bundle} is not the file the MCP Registry entry {name} pins (fileSha256 {sha256}); nothing was installed.",
  },
  mcp_registry_setting_required: {
    status: 422,
    message: "The MCP Registry entry {name} needs {variables}; give each with --env NAME=VALUE.",
  },
  mcp_registry_entry_unusable: {
    status: 422,
    message: "The MCP Registry entry {name} cannot be installed here: {reason}.",
  },
  mcp_registry_entry_file_invalid: {
    status: 422,
    message: "mcp-registry-entry.json is not the record of an MCP Registry entry: {reason}.",
  },
  // The dashboard's Store and update checks (host-bridge/sources/registry-listing.ts, installed-source.ts).
  mcp_registry_not_configured: {
    status: 400,
    message: "'{registry}' is not one of install.mcp_registries; only a registry the owner configured is asked.",
  },
} as const satisfies Record<string, { status: number; message: string }>;
