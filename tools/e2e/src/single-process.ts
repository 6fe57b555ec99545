import { buildApps, freePort, startNode, tempDir, type RunningProcess } from "@whc/testing";

export interface SingleProcess {
  proc: RunningProcess;
  /** Its whole environment: start it again with `startNode(main, env)` on the same data. */
  env: Record<string, string>;
  main: string;
  gatewayUrl: string;
  ingestUrl: string;
  /** The key printed on a first start (none when WHC_BOOTSTRAP_API_KEYS is given). */
  firstKey: string | undefined;
  dir: ReturnType<typeof tempDir>;
  /** Stops the process and removes its data directory. */
  stop(): Promise<void>;
}

/** The built all-in-one process (npm start's) on free loopback ports and a fresh data directory. */
export async function startSingleProcess(prefix: string, extraEnv: Record<string, string> = {}): Promise<SingleProcess> {
  const { "all-in-one": main } = buildApps("all-in-one");
  const dir = tempDir(prefix);
  const [gatewayPort, ingestPort] = [await freePort(), await freePort()];
  const ingestUrl = `http://127.0.0.1:${ingestPort}`;
  const env: Record<string, string> = {
    WHC_DATA_DIR: dir.path,
    WHC_HOST: "127.0.0.1",
    WHC_GATEWAY_PORT: String(gatewayPort),
    WHC_INGEST_PORT: String(ingestPort),
    WHC_INGEST_PUBLIC_URL: ingestUrl,
    ...extraEnv,
  };
  const proc = startNode(main!, env);
  await proc.waitForOutput(/webhook-capture ready/);
  const firstKey = env.WHC_BOOTSTRAP_API_KEYS ? undefined : (await proc.waitForOutput(/(whc_[A-Za-z0-9]{32,})/))[1];
  const started: SingleProcess = {
    proc,
    env,
    main: main!,
    gatewayUrl: `http://127.0.0.1:${gatewayPort}`,
    ingestUrl,
    firstKey,
    dir,
    async stop() {
      await started.proc.stop();
      dir.remove();
    },
  };
  return started;
}
