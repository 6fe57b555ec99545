import { create } from "@bufbuild/protobuf";
import type { ConnectRouter, ServiceImpl } from "@connectrpc/connect";
import { Health, HealthCheckResponseSchema, HealthCheckResponse_ServingStatus as Status } from "@whc/contracts";
import { AppError } from "@whc/errors";

/** A named check; "" is the whole server, as the gRPC health protocol defines. */
export type HealthChecks = Record<string, () => Promise<boolean> | boolean>;

async function statusOf(check: (() => Promise<boolean> | boolean) | undefined): Promise<Status> {
  if (!check) return Status.SERVICE_UNKNOWN;
  try {
    return (await check()) ? Status.SERVING : Status.NOT_SERVING;
  } catch {
    return Status.NOT_SERVING;
  }
}

export function createHealthService(checks: HealthChecks, watchIntervalMs = 5000): ServiceImpl<typeof Health> {
  return {
    async check(req) {
      const check = checks[req.service];
      if (!check) throw new AppError("not_found", `unknown service ${req.service}`);
      return create(HealthCheckResponseSchema, { status: await statusOf(check) });
    },
    async list() {
      const statuses: Record<string, ReturnType<typeof create<typeof HealthCheckResponseSchema>>> = {};
      for (const [name, check] of Object.entries(checks)) {
        statuses[name] = create(HealthCheckResponseSchema, { status: await statusOf(check) });
      }
      return { statuses };
    },
    async *watch(req, ctx) {
      let last: Status | undefined;
      while (!ctx.signal.aborted) {
        const status = await statusOf(checks[req.service]);
        if (status !== last) {
          last = status;
          yield create(HealthCheckResponseSchema, { status });
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, watchIntervalMs);
          ctx.signal.addEventListener("abort", () => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
  };
}

export function healthRoutes(checks: HealthChecks) {
  return (router: ConnectRouter) => {
    router.service(Health, createHealthService(checks));
  };
}
