// The reserved app names are derived from the real route table: every literal segment where a
// path holds an app's name, and the platform's kept segments (C-14, PERM-19, MAN-05).
import { beforeAll, describe, expect, it } from "vitest";
import { routeTable, type RouteTable } from "../../test/helpers/route-table";

let table: RouteTable;
beforeAll(async () => {
  table = await routeTable();
});

describe("reserved app names", () => {
  it("reserve every literal first segment under /api/apps/ of the route table", () => {
    const reserved = table.reservedAppNames(table.ROUTES);
    const literal = table.ROUTES.flatMap((row) => /^\/api\/apps\/([^/:*]+)/.exec(row.path)?.[1] ?? []);
    expect(literal.length).toBeGreaterThan(0);
    for (const segment of literal) expect(reserved.has(segment), segment).toBe(true);
  });

  it("reserve the segments kept for the platform's own routes: registry, registries, blob, install, register", () => {
    const reserved = table.reservedAppNames(table.ROUTES);
    for (const name of ["registry", "registries", "blob", "install", "register"])
      expect(reserved.has(name), name).toBe(true);
  });

  it("know every place a route holds an app's name, so a literal beside one is never missed", () => {
    const places = new Set(table.APP_NAME_PLACES);
    for (const row of table.ROUTES) {
      const segments = row.path.split("/");
      segments.forEach((segment, i) => {
        const holdsAppName = segment === ":app" || (segment === ":name" && segments[i - 1] === "apps");
        if (holdsAppName) expect(places.has(`${segments.slice(0, i).join("/")}/`), row.path).toBe(true);
      });
    }
  });

  it("reserve a literal segment beside an app's name in the internal routes too", () => {
    const reserved = table.reservedAppNames(table.ROUTES);
    const internal = table.ROUTES.flatMap((row) => /^\/api\/internal\/apps\/([^/:*]+)/.exec(row.path)?.[1] ?? []);
    expect(internal.length).toBeGreaterThan(0);
    for (const segment of internal) expect(reserved.has(segment), segment).toBe(true);
  });
});
