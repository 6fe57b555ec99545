import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ConfigError, loadConfig } from "@whc/config";
import { CatalogService, CryptoService, ReplayService } from "@whc/contracts";
import { buildApps, startAllInOne, tempDir, WORKSPACE_ROOT, type AllInOne } from "@whc/testing";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import {
  bytesOf,
  containerEnv,
  containerPort,
  containersOf,
  documentedYaml,
  KUBECTL,
  kubectlPresent,
  matches,
  MODELS,
  ofKind,
  OVERLAYS,
  overlayDir,
  PROCESSES,
  podLabels,
  processOf,
  render,
  type Container,
  type K8sObject,
  type Overlay,
} from "./manifests.js";

/**
 * deploy/kubernetes as a user meets it: each overlay rendered offline by `kubectl kustomize`,
 * every object valid against the Kubernetes schemas (kubernetes-models), and what a schema
 * cannot see: every variable is one its process reads and loads, every probe and Service reaches
 * a port the process serves, every selector selects, every secret placeholder stops start-up,
 * and the all-in-one process started with its Deployment's environment answers its probes.
 * Where kubectl is missing this is skipped, except in CI (CI=true), where it fails:
 * .ci/system-packages installs it.
 */

if (!kubectlPresent) console.info(`kubernetes: ${KUBECTL} not found; the manifest checks are skipped`);
if (!kubectlPresent && process.env.CI === "true") throw new Error(`${KUBECTL} is missing in CI: .ci/system-packages kubectl`);

const NAMESPACE = "webhook-capture";
const PUBLIC_PORTS: Record<string, string> = { gateway: "http", ingest: "http" };
const GRPC_SERVICES: Record<string, string> = { catalog: CatalogService.typeName, crypto: CryptoService.typeName, replay: ReplayService.typeName };
const PORT_SETTING: Record<string, "catalogPort" | "cryptoPort" | "replayPort"> = { catalog: "catalogPort", crypto: "cryptoPort", replay: "replayPort" };
const VERSION = (JSON.parse(readFileSync(path.join(WORKSPACE_ROOT, "package.json"), "utf8")) as { version: string }).version;

/** What a user puts in the Secrets: a value of each the services accept. */
const FILLED: Record<string, string> = {
  WHC_INTERNAL_TOKEN: randomBytes(32).toString("hex"),
  WHC_MASTER_KEYS: `k1:${randomBytes(32).toString("base64")}`,
  WHC_BLIND_INDEX_KEY: randomBytes(32).toString("base64"),
  WHC_MONGODB_URI: "mongodb://whc:secret@mongo-0.mongo:27017,mongo-1.mongo:27017/webhook_capture?replicaSet=rs0",
};

const rendered = new Map<Overlay, K8sObject[]>();
const objectsOf = (overlay: Overlay) => rendered.get(overlay)!;

/** Our Deployments with their one container and the process it runs. */
function workloads(objects: K8sObject[]) {
  return ofKind(objects, "Deployment").flatMap((d) =>
    containersOf(d).flatMap((c) => {
      const name = processOf(c);
      return name ? [{ deployment: d, container: c, name, process: PROCESSES[name]! }] : [];
    }),
  );
}

beforeAll(() => {
  if (kubectlPresent) for (const overlay of OVERLAYS) rendered.set(overlay, render(overlay));
});

describe.skipIf(!kubectlPresent).each(OVERLAYS)("kubectl kustomize deploy/kubernetes/overlays/%s", (overlay) => {
  it("renders objects that the Kubernetes schemas accept, all in one namespace", () => {
    const objects = objectsOf(overlay);
    expect(objects.length).toBeGreaterThan(5);
    for (const o of objects) {
      const Model = MODELS[`${o.apiVersion}/${o.kind}`];
      expect(Model, `a schema for ${o.apiVersion} ${o.kind}`).toBeDefined();
      expect(() => new Model!(o as never).validate(), `${o.kind} ${o.metadata.name}`).not.toThrow();
      if (o.kind === "Namespace") expect(o.metadata.name).toBe(NAMESPACE);
      else expect(o.metadata.namespace, `${o.kind} ${o.metadata.name}`).toBe(NAMESPACE);
      expect(o.metadata.labels?.["app.kubernetes.io/part-of"], `${o.kind} ${o.metadata.name}`).toBe("webhook-capture");
    }
    const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(new Set(names).size).toBe(names.length);
    // The validator is no formality: a port given as text is refused.
    const broken = structuredClone(ofKind(objects, "Deployment")[0]!);
    containersOf(broken)[0]!.ports![0]!.containerPort = "8080" as never;
    expect(() => new Deployment(broken as never).validate()).toThrow(/containerPort must be integer/);
  });

  it("runs the one image, tagged with the project's version, in every container of ours", () => {
    const ours = workloads(objectsOf(overlay));
    expect(ours.map((w) => w.name).sort()).toEqual(overlay === "all-in-one" ? ["all-in-one"] : ["catalog", "crypto", "gateway", "ingest", "replay"]);
    for (const { container } of ours) expect(container.image, container.name).toBe(`webhook-capture:${VERSION}`);
    // Every container of ours is one process: another entry point (or none) is not ours.
    for (const d of ofKind(objectsOf(overlay), "Deployment")) {
      for (const c of containersOf(d)) expect(processOf(c) !== undefined || c.image.startsWith("nats:"), `${d.metadata.name}/${c.name}`).toBe(true);
    }
  });

  it("gives each process only variables it reads, from Secrets and ConfigMaps that hold them, and the process loads them", () => {
    const objects = objectsOf(overlay);
    for (const { container, name, process } of workloads(objects)) {
      const known = new Set(Object.values(process.spec).map((s) => s.name));
      const names = (container.env ?? []).map((v) => v.name);
      expect(names.filter((n) => !known.has(n)), `variables ${name} does not read`).toEqual([]);
      expect(new Set(names).size, `${name}: a variable given twice`).toBe(names.length);
      expect(container.envFrom, `${name}: envFrom hides which variables a process gets`).toBeUndefined();
      expect(() => loadConfig(process.spec, containerEnv(objects, container, FILLED)), name).not.toThrow();
    }
    // Every Secret value is one FILLED knows how to fill, so the check above covers them all.
    for (const s of ofKind(objects, "Secret")) for (const key of Object.keys(s.stringData ?? s.data ?? {})) expect(Object.keys(FILLED)).toContain(key);
  });

  it("stops start-up, naming the variable, while a Secret still holds its placeholder", () => {
    const objects = objectsOf(overlay);
    let checked = 0;
    for (const { container, name, process } of workloads(objects)) {
      for (const v of container.env ?? []) {
        const ref = v.valueFrom?.secretKeyRef;
        if (!ref) continue;
        const { [ref.key]: _unfilled, ...others } = FILLED;
        const env = containerEnv(objects, container, others);
        let thrown: unknown;
        try {
          loadConfig(process.spec, env);
        } catch (err) {
          thrown = err;
        }
        expect(ConfigError.is(thrown), `${name} with the placeholder of ${v.name}`).toBe(true);
        expect((thrown as ConfigError).variable).toBe(v.name);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(0);
  });

  it("probes the paths and ports each process serves: /readyz to start, /healthz (or its gRPC service) after", () => {
    const objects = objectsOf(overlay);
    for (const { container, name, process } of workloads(objects)) {
      const config = loadConfig(process.spec, containerEnv(objects, container, FILLED)) as Record<string, unknown>;
      const { startupProbe: startup, readinessProbe: readiness, livenessProbe: liveness } = container;
      expect(startup && readiness && liveness, `${name} has the three probes`).toBeTruthy();
      if (name in GRPC_SERVICES) {
        const port = config[PORT_SETTING[name]!];
        for (const probe of [startup!, readiness!, liveness!]) expect(probe.grpc?.port, name).toBe(port);
        expect(containerPort(container, "grpc")).toBe(port);
        expect(startup!.grpc!.service).toBe("");
        expect(readiness!.grpc!.service).toBe(GRPC_SERVICES[name]);
        expect(liveness!.grpc!.service).toBe(GRPC_SERVICES[name]);
      } else {
        const served = [config.gatewayPort, config.ingestPort].filter((p) => p !== undefined);
        for (const probe of [startup!, readiness!, liveness!]) expect(served, name).toContain(containerPort(container, probe.httpGet!.port));
        expect([startup!.httpGet!.path, readiness!.httpGet!.path, liveness!.httpGet!.path]).toEqual(["/readyz", "/healthz", "/healthz"]);
        for (const port of served) expect(container.ports?.map((p) => p.containerPort), name).toContain(port);
      }
      // The metrics port is declared where the process listens for it, reachable from the pod's address.
      const metrics = container.ports?.find((p) => p.name === "metrics");
      if (metrics) {
        expect(metrics.containerPort).toBe(config.metricsPort);
        expect(config.internalHost, `${name} binds its metrics port on the pod's address`).toBe("0.0.0.0");
      }
    }
  });

  it("sizes ingest's in-flight body budget to the memory limit, and requests what the autoscaler measures", () => {
    const objects = objectsOf(overlay);
    for (const { container, name, process } of workloads(objects)) {
      const limit = container.resources?.limits?.memory;
      expect(limit, `${name} has a memory limit`).toBeDefined();
      expect(container.resources?.requests?.cpu, `${name} requests CPU`).toBeDefined();
      const config = loadConfig(process.spec, containerEnv(objects, container, FILLED)) as Record<string, unknown>;
      // A flood peaks at about twice the budget above the process's own memory (docs/operations.md).
      if (typeof config.ingestMaxInflightBytes === "number") {
        expect(bytesOf(limit!), name).toBeGreaterThanOrEqual(2 * config.ingestMaxInflightBytes + 128 * 2 ** 20);
      }
    }
  });

  it("points every Service, PodDisruptionBudget and autoscaler at the pods and ports they mean", () => {
    const objects = objectsOf(overlay);
    const deployments = ofKind(objects, "Deployment");
    for (const svc of ofKind(objects, "Service")) {
      const selected = deployments.filter((d) => matches({ matchLabels: svc.spec.selector }, podLabels(d)));
      expect(selected.map((d) => d.metadata.name), `Service ${svc.metadata.name}`).toHaveLength(1);
      for (const port of svc.spec.ports as { targetPort: string | number }[]) {
        expect(() => containerPort(containersOf(selected[0]!)[0]!, port.targetPort), `Service ${svc.metadata.name}`).not.toThrow();
      }
    }
    for (const pdb of ofKind(objects, "PodDisruptionBudget")) {
      expect(deployments.filter((d) => matches(pdb.spec.selector, podLabels(d))), `PDB ${pdb.metadata.name}`).toHaveLength(1);
    }
    const scaled = new Set(ofKind(objects, "HorizontalPodAutoscaler").map((h) => h.spec.scaleTargetRef.name as string));
    for (const name of scaled) expect(deployments.map((d) => d.metadata.name)).toContain(name);
    for (const d of deployments) {
      const replicated = scaled.has(d.metadata.name) || (d.spec.replicas ?? 1) > 1;
      // An applied replica count would undo the autoscaler's at every apply.
      if (scaled.has(d.metadata.name)) expect(d.spec.replicas, `${d.metadata.name} leaves its count to the autoscaler`).toBeUndefined();
      const budgets = ofKind(objects, "PodDisruptionBudget").filter((p) => matches(p.spec.selector, podLabels(d)));
      expect(budgets.length, `${d.metadata.name}: a PodDisruptionBudget exactly when replicated`).toBe(replicated ? 1 : 0);
    }
    if (overlay === "distributed") expect([...scaled].sort()).toEqual(["gateway", "ingest", "replay"]);
  });
});

describe.skipIf(!kubectlPresent)("the distributed overlay's internal calls", () => {
  it("carry one internal token from one Secret in every service, to peers named by their Services", () => {
    const objects = objectsOf("distributed");
    const services = ofKind(objects, "Service");
    const deployments = ofKind(objects, "Deployment");
    for (const { container, name, process } of workloads(objects)) {
      expect(process.distributed).toBe(true);
      const token = container.env?.find((v) => v.name === "WHC_INTERNAL_TOKEN");
      expect(token?.valueFrom?.secretKeyRef, name).toEqual({ name: "webhook-capture-internal-token", key: "WHC_INTERNAL_TOKEN" });
      const config = loadConfig(process.spec, containerEnv(objects, container, FILLED)) as Record<string, unknown>;
      for (const key of ["catalogUrl", "cryptoUrl", "replayUrl", "natsUrl", "ingestInternalUrl"]) {
        const url = config[key];
        if (typeof url !== "string" || !container.env?.some((v) => v.name === PROCESSES[name]!.spec[key]!.name)) continue;
        const { hostname, port } = new URL(url);
        const svc = services.find((s) => s.metadata.name === hostname);
        expect(svc, `${name}: ${key} ${url} names a Service`).toBeDefined();
        const svcPort = (svc!.spec.ports as { port: number; targetPort: string }[]).find((p) => p.port === Number(port));
        expect(svcPort, `${name}: ${key} ${url} names a port of Service ${hostname}`).toBeDefined();
        // ...and that Service's pods listen there, as their own configuration says.
        const target = deployments.find((d) => matches({ matchLabels: svc!.spec.selector }, podLabels(d)))!;
        expect(containerPort(containersOf(target)[0]!, svcPort!.targetPort), `${name}: ${key}`).toBe(Number(port));
      }
    }
  });

  it("admit every internal port only from the deployment's own pods, and the public ports from anyone", () => {
    const objects = objectsOf("distributed");
    const policies = ofKind(objects, "NetworkPolicy");
    for (const d of ofKind(objects, "Deployment")) {
      const labels = podLabels(d);
      const applying = policies.filter((p) => matches(p.spec.podSelector, labels));
      expect(applying.length, `${d.metadata.name} is covered by a NetworkPolicy`).toBeGreaterThan(0);
      const container = containersOf(d)[0]!;
      const rules = applying.flatMap((p) => p.spec.ingress as { from?: { podSelector?: Parameters<typeof matches>[0]; namespaceSelector?: unknown; ipBlock?: unknown }[]; ports?: { port: string | number }[] }[]);
      for (const rule of rules) {
        const fromAnyone = !rule.from || rule.from.some((f) => f.namespaceSelector !== undefined || f.ipBlock !== undefined);
        if (fromAnyone) {
          // Open to anyone: only the public port, and only on the public processes.
          const ports = (rule.ports ?? []).map((p) => containerPort(container, p.port));
          expect(rule.ports?.length, `${d.metadata.name}: a rule open to anyone names its ports`).toBeGreaterThan(0);
          expect(ports, d.metadata.name).toEqual([containerPort(container, PUBLIC_PORTS[processOf(container) ?? ""] ?? "none")]);
        } else {
          for (const f of rule.from!) expect(matches(f.podSelector!, { "app.kubernetes.io/part-of": "webhook-capture" }), d.metadata.name).toBe(true);
        }
      }
    }
  });
});

describe.skipIf(!kubectlPresent)("docs/kubernetes.md's own overlay", () => {
  it("fills every Secret from the files it documents, and every process then loads its configuration", () => {
    const dir = tempDir("whc-overlay-");
    try {
      const ours = path.relative(dir.path, overlayDir("distributed"));
      const kustomization = documentedYaml("Your own overlay");
      expect(kustomization).toContain("../webhook-capture/deploy/kubernetes/overlays/distributed");
      writeFileSync(path.join(dir.path, "kustomization.yaml"), kustomization.replace("../webhook-capture/deploy/kubernetes/overlays/distributed", ours));
      mkdirSync(path.join(dir.path, "secrets"));
      const files: Record<string, string[]> = { "internal-token": ["WHC_INTERNAL_TOKEN"], keys: ["WHC_MASTER_KEYS", "WHC_BLIND_INDEX_KEY"], mongodb: ["WHC_MONGODB_URI"] };
      for (const [file, keys] of Object.entries(files)) writeFileSync(path.join(dir.path, "secrets", `${file}.env`), keys.map((k) => `${k}=${FILLED[k]}\n`).join(""));

      const objects = render("distributed", dir.path);
      for (const o of objects) expect(() => new MODELS[`${o.apiVersion}/${o.kind}`]!(o as never).validate(), `${o.kind} ${o.metadata.name}`).not.toThrow();
      const ourWorkloads = workloads(objects);
      expect(ourWorkloads).toHaveLength(5);
      for (const { container, name, process } of ourWorkloads) {
        expect(container.image).toBe("registry.example.com/webhook-capture:0.1.0");
        // No stand-ins this time: the values are the ones the Secrets and ConfigMap now hold.
        const config = loadConfig(process.spec, containerEnv(objects, container)) as Record<string, unknown>;
        expect(config.internalToken, name).toBe(FILLED.WHC_INTERNAL_TOKEN);
        if ("ingestPublicUrl" in config) expect(config.ingestPublicUrl, name).toBe("https://hooks.example.org");
      }
    } finally {
      dir.remove();
    }
  });
});

describe.skipIf(!kubectlPresent)("the all-in-one process started with its Deployment's environment", () => {
  let system: AllInOne | undefined;
  let dir: ReturnType<typeof tempDir> | undefined;
  let container: Container;

  beforeAll(async () => {
    const { "all-in-one": main } = buildApps("all-in-one");
    const objects = objectsOf("all-in-one");
    container = workloads(objects)[0]!.container;
    dir = tempDir("whc-kubernetes-");
    // Ports and the data directory are the test's own; every other variable is the manifest's.
    const { WHC_DATA_DIR: _volume, WHC_HOST: _host, ...env } = containerEnv(objects, container, FILLED);
    system = await startAllInOne(main!, path.join(dir.path, "data"), env);
  });

  afterAll(async () => {
    await system?.proc.stop();
    dir?.remove();
  });

  it("answers every probe with 200", async () => {
    const config = loadConfig(PROCESSES["all-in-one"]!.spec, containerEnv(objectsOf("all-in-one"), container, FILLED)) as Record<string, number>;
    const urlOf: Record<number, string> = { [config.gatewayPort!]: system!.gatewayUrl, [config.ingestPort!]: system!.ingestUrl };
    for (const probe of [container.startupProbe!, container.readinessProbe!, container.livenessProbe!]) {
      const base = urlOf[containerPort(container, probe.httpGet!.port)];
      const res = await fetch(`${base}${probe.httpGet!.path}`);
      expect(res.status, probe.httpGet!.path).toBe(200);
    }
  });
});
