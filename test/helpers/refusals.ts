// The GatewayError a call is refused with, for tests that check its code and words.
import { expect } from "vitest";
import { GatewayError } from "../../kernel/contracts/errors";

/** The GatewayError `promise` rejects with; fails the test when it resolves or rejects with anything else. */
export async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

/** The GatewayError `run` throws; fails the test when it returns or throws anything else. */
export function thrown(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error("expected a refusal");
}
