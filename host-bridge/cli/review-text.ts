// The install review in words for the terminal: prerequisites first, then what installing
// grants and runs, then the findings and the digest the owner consents to.
type Review = Record<string, any>;

function list(items: string[]): string {
  return items.length ? items.join(", ") : "none";
}

/** Renders a review as lines of text. */
export function reviewText(review: Review, digest: string): string {
  const lines: string[] = [];
  const app = review.app ?? {};
  lines.push(`${app.displayName ?? app.name} (${app.name} ${app.version})`);
  if (app.description) lines.push(`  ${app.description}`);
  const prerequisites = review.prerequisites ?? [];
  lines.push(`Needs: ${prerequisites.length ? "" : "nothing beyond PersonalClaw"}`);
  for (const p of prerequisites) lines.push(`  - ${p.name}: ${p.why} (${p.how})`);
  const permissions = review.permissions ?? {};
  lines.push("Permissions:");
  lines.push(`  api: ${list(permissions.api ?? [])}`);
  lines.push(`  storage: ${permissions.storage ? "yes" : "no"}, memory: ${permissions.memory ? "yes" : "no"}, cron: ${permissions.cron ? "yes" : "no"}, agent: ${permissions.agent ?? "none"}`);
  lines.push(`  app messaging: ${list(permissions.appMessaging ?? [])}`);
  const network = permissions.network?.declared;
  lines.push(`  network (advisory, not enforced): ${Array.isArray(network) ? list(network) : network ? "yes" : "no"}`);
  lines.push(`Scheduled jobs: ${list((review.scheduledJobs ?? []).map((j: any) => `${j.name} (${j.schedule})`))}`);
  lines.push(`Python packages: ${list(review.pythonPackages ?? [])}`);
  lines.push(`npm packages: ${list(review.npmPackages?.packages ?? [])}`);
  lines.push(`UI: ${review.ui?.entry ?? "none"}`);
  lines.push(`Backend process: ${review.backend ? [review.backend.command, ...(review.backend.args ?? [])].join(" ") : "none"}`);
  lines.push(`Install hook: ${review.installHook ? [review.installHook.command, ...(review.installHook.args ?? [])].join(" ") : "none"}`);
  lines.push(`MCP servers: ${list((review.mcpServers ?? []).map((m: any) => m.name))}`);
  lines.push(`Launched programs: ${list((review.launches ?? []).map((l: any) => l.program))}`);
  if (review.keptData) {
    const kept = review.keptData;
    lines.push(`Kept data: kept data from ${kept.version ?? "an unrecorded version"} of ${kept.parkedAt ?? "an unrecorded date"}; adopted only with --adopt-data, otherwise the app starts fresh and it stays parked`);
  }
  lines.push(`Writes outside its folder: ${list((review.writes ?? []).map((w: any) => w.path))}`);
  const findings = review.findings ?? { runtime: [], tests: [] };
  lines.push(`Findings in code the app runs: ${findings.runtime.length}`);
  for (const f of findings.runtime) lines.push(`  - [${f.severity}] ${f.rule} ${f.path}:${f.line ?? "-"} ${f.message}`);
  lines.push(`Findings in test files nothing loads: ${findings.tests.length}`);
  for (const f of findings.tests) lines.push(`  - [${f.severity}] ${f.rule} ${f.path}:${f.line ?? "-"} ${f.message}`);
  lines.push(`Scan verdict: ${review.verdict}`);
  lines.push(`Consent digest: ${digest}`);
  return `${lines.join("\n")}\n`;
}
