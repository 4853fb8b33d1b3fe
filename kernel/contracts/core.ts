// What this core offers apps: its feature names, checked against `requiresCoreFeatures`.
export const CORE_FEATURES = ["backends", "ui", "proxy-signature", "app-messaging", "security-log"] as const;
