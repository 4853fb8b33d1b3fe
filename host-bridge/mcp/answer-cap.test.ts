import { describe, expect, it } from "vitest";
import { capAnswers, topLevelId } from "./answer-cap";

/** Feeds `chunks` through a cap of `max` bytes; answers the lines that came out and the drops reported. */
async function through(max: number, chunks: string[]) {
  const dropped: Array<string | number | null> = [];
  const cap = capAnswers(max, (id) => dropped.push(id));
  let out = "";
  cap.on("data", (chunk: Buffer | string) => (out += chunk.toString()));
  for (const chunk of chunks) cap.write(Buffer.from(chunk));
  await new Promise<void>((resolve) => cap.end(resolve));
  return { lines: out.split("\n").filter((l) => l !== ""), dropped };
}

describe("the cap on a server's answers", () => {
  it("reads the id at the top level only, numbers and strings", () => {
    expect(topLevelId('{"jsonrpc":"2.0","id":7,"result":{')).toBe(7);
    expect(topLevelId('{"jsonrpc":"2.0","id":"a\\"b","result":')).toBe('a"b');
    expect(topLevelId('{"result":{"id":99,"text":"x"},"id":3,')).toBe(3);
    expect(topLevelId('{"result":{"id":99,"text":"xxxxxxxx')).toBeUndefined();
    expect(topLevelId('{"text":"\\"id\\":5","id":-2}')).toBe(-2);
  });

  it("passes lines within the cap whole, however they are chunked", async () => {
    const { lines, dropped } = await through(64, ['{"id":1,', '"result":{}}\n{"id":2', ',"result":{}}\n']);
    expect(lines.map((l) => JSON.parse(l).id)).toEqual([1, 2]);
    expect(dropped).toEqual([]);
  });

  it("drops a line past the cap and answers its request with an error carrying the stable code", async () => {
    const big = `{"jsonrpc":"2.0","id":5,"result":{"text":"${"x".repeat(500)}"}}\n`;
    const { lines, dropped } = await through(100, [big.slice(0, 60), big.slice(60), '{"id":6,"result":{}}\n']);
    expect(dropped).toEqual([5]);
    const [error, next] = lines.map((l) => JSON.parse(l));
    expect(error).toMatchObject({ id: 5, error: { code: -32003, data: { code: "mcp_tool_answer_too_large" } } });
    expect(next).toEqual({ id: 6, result: {} });
  });

  it("drops a line past the cap whose id cannot be read, answering nothing for it", async () => {
    const { lines, dropped } = await through(50, [`{"result":"${"y".repeat(200)}"}\n`, '{"id":1,"result":{}}\n']);
    expect(dropped).toEqual([null]);
    expect(lines.map((l) => JSON.parse(l))).toEqual([{ id: 1, result: {} }]);
  });
});
