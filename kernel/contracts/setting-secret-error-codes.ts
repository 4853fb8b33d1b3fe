// The error codes of owner settings and secrets (kernel/contracts/settings*, secrets.ts,
// secret-delivery.ts). Part of the one registry of codes (error-codes.ts spreads them into
// ERROR_CODES, where they stood before): append-only and never reworded, like every code.

export const SETTING_SECRET_ERROR_CODES = {
  config_path_not_editable: {
    status: 400,
    message: "'{path}' is not an editable setting; GET /api/config/personalclaw lists the ones that are.",
  },
  config_field_not_declared: {
    status: 403,
    message: "The app '{app}' did not declare the setting '{path}' for {access} in permissions.config.",
  },
  setting_value_invalid: { status: 400, message: "The setting '{path}' takes {expected}; nothing was written." },
  config_file_invalid: {
    status: 409,
    message:
      "config.json does not validate ({reason}); fix the file or restore it, then try again. Nothing was written.",
  },
  manifest_config_security: {
    status: 422,
    message: "The manifest field '{field}' names the security setting '{path}'; no app may reach a security setting.",
  },
  manifest_address_refused: {
    status: 422,
    message: "The manifest field '{field}' names {address}, an address no app may reach: {reason}.",
  },
  manifest_secret_origin_not_granted: {
    status: 422,
    message: "The manifest field '{field}' sends a secret to {origin}, which permissions.network does not grant.",
  },
  secret_misdirected: { status: 403, message: "A secret's placeholder was sent where the secret does not go." },
  secret_origins_not_brokered: {
    status: 409,
    message:
      "The app holds the value of '{name}' (its manifest declares no `use`, or `delivery: \"env\"`), so where it is sent cannot be chosen; assign it without origins.",
  },
  secret_origin_invalid: { status: 400, message: "The origin '{origin}' {reason}." },
  secret_origin_not_granted: {
    status: 409,
    message:
      "The origin {origin} is not covered by the network grant you consented to for '{app}'; its egress broker could not reach it. Choose origins among the app's granted hosts.",
  },
  secret_name_invalid: {
    status: 400,
    message:
      "'{name}' is not a secret name: use 1 to 64 capital letters, digits and underscores, starting with a letter.",
  },
  secret_name_reserved: {
    status: 400,
    message:
      "Secret names beginning PCSECRET_ or PCPROJ_ are PersonalClaw's own; '{name}' cannot be stored or deleted.",
  },
  secret_value_invalid: {
    status: 400,
    message: "A secret value is 1 to {limit} characters of text without NUL; nothing was stored.",
  },
  secret_not_found: { status: 404, message: "No secret named '{name}' is stored." },
  secret_not_declared: {
    status: 409,
    message:
      "The app '{app}' does not declare a secret named '{name}' in its manifest; it can only be given the secrets it declared.",
  },
  secret_store_unreadable: { status: 500, message: "The secret store cannot be used ({reason}); nothing was changed." },
} as const;
