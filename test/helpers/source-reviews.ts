// The parts of an install review an app generated from each kind of package source carries
// (npmClosure, mcpbBundle, mcpRegistryEntry), as the bridge builds them: what the source
// summary is read from, in the terminal and in the dashboard alike.
export const NPM_CLOSURE = {
  source: "npm:@modelcontextprotocol/server-memory@2025.8.4",
  registry: "http://127.0.0.2:4873/",
  root: "@modelcontextprotocol/server-memory@2025.8.4",
  packages: 95,
  bytes: 3_250_000,
  pinned: [],
  native: ["esbuild@0.25.0"],
  note: "pinned",
};

const SIGNER = {
  subject: "CN=Signed Publisher Ltd",
  issuer: "CN=PersonalClaw test CA",
  fingerprint: "AA:BB",
  validFrom: "2026-12-06T00:00:00.000Z",
  validTo: "2026-12-08T00:00:00.000Z",
};

export const MCPB_BUNDLE = {
  source: "./notes.mcpb",
  sha256: "0".repeat(64),
  bytes: 1_250_865,
  manifestVersion: "0.3",
  name: "notes",
  version: "1.0.0",
  author: "Ada Example <ada@example.com>",
  serverType: "node",
  compatibility: [],
  signature: "verified",
  signer: SIGNER,
  userConfig: [],
  files: 765,
  unpackedBytes: 5_760_608,
};

export const REGISTRY_ENTRY = {
  registry: "https://registry.modelcontextprotocol.io",
  official: true,
  name: "io.github.modelcontextprotocol/server-memory",
  namespace: "io.github.modelcontextprotocol",
  version: "2025.8.4",
  package: "npm:@modelcontextprotocol/server-memory@2025.8.4",
  settings: [],
  note: "A registry vouches for who published a name.",
};

export const PYPI_CLOSURE = {
  source: "pypi:weather-mcp==1.2.0",
  index: "http://127.0.0.2:8080/simple/",
  packages: 3,
  bytes: 48_000,
  pinned: ["mcp==1.0.0", "weather-mcp==1.2.0", "httpx==0.27.0"],
  native: [],
};

/** One review part per kind of source, and combinations a registry entry makes, with none for an ordinary app. */
export const SOURCE_REVIEWS: Array<{ name: string; review: Record<string, unknown> }> = [
  { name: "npm", review: { npmClosure: NPM_CLOSURE } },
  { name: "unscoped npm", review: { npmClosure: { ...NPM_CLOSURE, root: "left-pad@1.3.0", native: [] } } },
  { name: "mcpb verified", review: { npmClosure: null, mcpbBundle: MCPB_BUNDLE } },
  {
    name: "mcpb untrusted binary",
    review: {
      mcpbBundle: { ...MCPB_BUNDLE, signature: "untrusted", serverType: "binary", signer: { ...SIGNER, reason: "x" } },
    },
  },
  { name: "mcpb unsigned", review: { mcpbBundle: { ...MCPB_BUNDLE, signature: "unsigned", signer: undefined } } },
  { name: "registry npm", review: { npmClosure: NPM_CLOSURE, mcpRegistryEntry: REGISTRY_ENTRY } },
  {
    name: "registry mcpb elsewhere",
    review: {
      mcpbBundle: MCPB_BUNDLE,
      mcpRegistryEntry: { ...REGISTRY_ENTRY, official: false, registry: "https://mcp.example.com" },
    },
  },
  { name: "pypi", review: { npmClosure: null, pypiClosure: PYPI_CLOSURE } },
  { name: "registry pypi", review: { pypiClosure: PYPI_CLOSURE, mcpRegistryEntry: REGISTRY_ENTRY } },
  { name: "ordinary app", review: { npmClosure: null } },
];
