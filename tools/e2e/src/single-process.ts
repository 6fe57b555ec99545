import { buildApps, startAllInOne, tempDir, type RunningProcess } from "@whc/testing";

export interface SingleProcess {
  proc: RunningProcess;
  /** Its whole environment: start it again with `startNode(main, env)` on the same data. */
  env: Record<string, string>;
  main: string;
  gatewayUrl: string;
  ingestUrl: string;
  metricsUrl: string;
  /** The key printed on a first start (none when WHC_BOOTSTRAP_API_KEYS is given). */
  firstKey: string | undefined;
  dir: ReturnType<typeof tempDir>;
  /** Stops the process and removes its data directory. */
  stop(): Promise<void>;
}

/**
 * The built all-in-one process (npm start's) on free loopback ports and a fresh data directory,
 * logging at info as `npm start` does, with the key it printed on a first start.
 */
export async function startSingleProcess(prefix: string, extraEnv: Record<string, string> = {}): Promise<SingleProcess> {
  const { "all-in-one": main } = buildApps("all-in-one");
  const dir = tempDir(prefix);
  const { proc, env, gatewayUrl, ingestUrl, metricsUrl } = await startAllInOne(main!, dir.path, { WHC_LOG_LEVEL: "info", ...extraEnv });
  const firstKey = env.WHC_BOOTSTRAP_API_KEYS ? undefined : (await proc.waitForOutput(/(whc_[A-Za-z0-9]{32,})/))[1];
  const started: SingleProcess = {
    proc,
    env,
    main: main!,
    gatewayUrl,
    ingestUrl,
    metricsUrl,
    firstKey,
    dir,
    async stop() {
      await started.proc.stop();
      dir.remove();
    },
  };
  return started;
}
