import { describe, expect, it } from "vitest";
import { diesWithParent, findSetpriv, restartDelayMs } from "./workerd-supervisor";

describe("workerd supervision", () => {
  it("backs off from 250 ms, doubling, to at most 10 s", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 10].map(restartDelayMs)).toEqual([250, 500, 1000, 2000, 4000, 8000, 10000, 10000]);
  });
  it("runs workerd under setpriv --pdeathsig KILL when setpriv exists", () => {
    expect(diesWithParent("/usr/bin/setpriv", "/bin/workerd", ["serve", "x"])).toEqual({
      file: "/usr/bin/setpriv",
      args: ["--pdeathsig", "KILL", "--", "/bin/workerd", "serve", "x"],
    });
    expect(diesWithParent(null, "/bin/workerd", ["serve"])).toEqual({ file: "/bin/workerd", args: ["serve"] });
    expect(findSetpriv("/nonexistent")).toMatch(/setpriv$/);
  });
});
