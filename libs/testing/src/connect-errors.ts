import { expect } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorDetailSchema } from "@whc/contracts";

/** The error a call failed with; the test fails if it succeeded or threw anything but a ConnectError. */
export async function rejection(call: Promise<unknown>): Promise<ConnectError> {
  const outcome = await call.then(
    () => ({ failed: false as const }),
    (error: unknown) => ({ failed: true as const, error }),
  );
  if (!outcome.failed) throw new Error("expected the call to fail, it succeeded");
  expect(outcome.error).toBeInstanceOf(ConnectError);
  return outcome.error as ConnectError;
}

/** The call failed with this Connect code and this project reason (and field, when given). */
export async function expectFailure(call: Promise<unknown>, code: Code, reason: string, field?: { field: string; fieldReason: string }) {
  const err = await rejection(call);
  const [detail] = err.findDetails(ErrorDetailSchema);
  expect({ code: Code[err.code], reason: detail?.reason }).toEqual({ code: Code[code], reason });
  if (field) expect({ field: detail?.field, fieldReason: detail?.fieldReason }).toEqual(field);
  return err;
}
