import { describe, expect, it } from "vitest";
import { firstStopInOrder, mapInOrder } from "./bounded-parallel";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("bounded parallel runs answer as a one-at-a-time loop would", () => {
  it("the stop reported is the lowest index even when a later item stops first", async () => {
    const delays = [30, 25, 20, 15, 1, 1, 1, 1];
    for (let attempt = 0; attempt < 3; attempt++) {
      const stop = await firstStopInOrder(delays, 8, async (ms, i) => {
        await sleep(ms);
        return i === 1 || i === 5 ? `stopped at ${i}` : null;
      });
      expect(stop).toBe("stopped at 1");
    }
  });

  it("never runs more than the limit at once, starts nothing after a stop, and awaits every running item before answering", async () => {
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const finished: number[] = [];
    const stop = await firstStopInOrder(
      Array.from({ length: 100 }, (_, i) => i),
      4,
      async (i) => {
        started.push(i);
        running++;
        most = Math.max(most, running);
        await sleep(i === 10 ? 1 : 5);
        running--;
        finished.push(i);
        return i === 10 ? "ten" : null;
      },
    );
    expect(stop).toBe("ten");
    expect(most).toBe(4);
    expect(running).toBe(0);
    expect(finished.sort((a, b) => a - b)).toEqual(started.sort((a, b) => a - b));
    expect(Math.max(...started)).toBeLessThan(10 + 4);
  });

  it("the error thrown is the lowest index's, whichever threw first", async () => {
    await expect(
      firstStopInOrder([40, 1, 1], 3, async (ms, i) => {
        await sleep(ms);
        if (i !== 1) throw new Error(`item ${i}`);
        return null;
      }),
    ).rejects.toThrow("item 0");
  });

  it("mapInOrder keeps input order whatever the completion order", async () => {
    const out = await mapInOrder([30, 1, 20, 5, 10], 5, async (ms, i) => {
      await sleep(ms);
      return i * 10;
    });
    expect(out).toEqual([0, 10, 20, 30, 40]);
  });

  it("an empty list answers at once", async () => {
    expect(await firstStopInOrder([], 8, async () => "never")).toBeNull();
    expect(await mapInOrder([], 8, async () => 1)).toEqual([]);
  });
});
