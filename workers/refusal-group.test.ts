import { describe, expect, it } from "vitest";
import { refusalGroup } from "./refusal-group";

const rows = [
  { method: "GET" as const, path: "/api/apps" },
  { method: "GET" as const, path: "/api/apps/:name" },
  { method: "POST" as const, path: "/api/apps/preview" },
  { method: "GET" as const, path: "/apps/:name/api/*" },
  { method: "GET" as const, path: "/api/status" },
];

describe("refusalGroup", () => {
  it.each([
    ["GET", "/api/apps/weather", "GET /api/apps/:name"],
    ["GET", "/api/apps/other-app", "GET /api/apps/:name"],
    ["POST", "/api/apps/preview", "POST /api/apps/preview"],
    ["GET", "/apps/notes/api/a/b/c", "GET /apps/:name/api/*"],
    ["GET", "/apps/notes/api/x9", "GET /apps/:name/api/*"],
    ["GET", "/no/such/path/123", "GET unrouted"],
    ["BREW", "/api/status", "OTHER /api/status"],
  ])("%s %s is counted as %s", (method, path, group) => {
    expect(refusalGroup(method, path, rows)).toBe(group);
  });

  it("names the row it is given and the reason, whatever the path", () => {
    expect(refusalGroup("GET", "/api/apps/x", rows, { method: "GET", path: "/api/apps/:name" }, "owner_only")).toBe(
      "GET /api/apps/:name owner_only",
    );
  });

  it("maps ten thousand unique paths to a handful of groups", () => {
    const groups = new Set<string>();
    for (let i = 0; i < 10_000; i++) groups.add(refusalGroup(i % 2 ? "GET" : "POST", `/api/flood-${i}/x`, rows));
    expect(groups.size).toBeLessThanOrEqual(2);
  });
});
