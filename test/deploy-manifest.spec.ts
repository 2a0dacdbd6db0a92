import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

/**
 * The Kubernetes manifest and the Dockerfile agree with what the gateway
 * needs to run as shipped: checked field by field, since no cluster runs here.
 */
const read = (path: string) => readFileSync(fileURLToPath(new URL(`../${path}`, import.meta.url)), 'utf8');
const docs = parseAllDocuments(read('deploy/kubernetes/switchyard.yaml')).map((d) => d.toJS() as any);
const byKind = (kind: string) => docs.find((d) => d?.kind === kind);
const deployment = byKind('Deployment');
const pod = deployment.spec.template.spec;
const container = pod.containers.find((c: any) => c.name === 'switchyard');
const env = (name: string): string | undefined => container.env.find((e: any) => e.name === name)?.value;
const dockerfile = read('Dockerfile');
/** The runtime stage: everything after its FROM. */
const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

describe('deploy/kubernetes/switchyard.yaml', () => {
  it('parses, every document with a kind', () => {
    expect(docs.map((d) => d.kind)).toEqual(expect.arrayContaining(['Secret', 'Deployment', 'PodDisruptionBudget', 'Service']));
  });

  it('runs as a non-root user, read-only root, no privilege escalation, no capabilities', () => {
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: expect.any(Number) });
    expect(pod.securityContext.runAsUser).not.toBe(0);
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
  });

  it('mounts a writable volume at the data directory, writable by the pod’s group', () => {
    const dataDir = env('SWITCHYARD_DATA_DIR') ?? /SWITCHYARD_DATA_DIR=(\S+)/.exec(runtime)?.[1];
    expect(dataDir).toBe('/data');
    const mount = container.volumeMounts.find((m: any) => m.mountPath === dataDir);
    expect(mount).toBeDefined();
    expect(mount.readOnly).not.toBe(true);
    const volume = pod.volumes.find((v: any) => v.name === mount.name);
    expect(volume.emptyDir ?? volume.persistentVolumeClaim).toBeDefined();
    expect(pod.securityContext.fsGroup).toBe(pod.securityContext.runAsGroup);
  });

  it('probes liveness on /health and readiness on /ready, on a declared port', () => {
    const ports = container.ports.map((p: any) => p.name);
    expect(container.livenessProbe.httpGet).toMatchObject({ path: '/health' });
    expect(container.readinessProbe.httpGet).toMatchObject({ path: '/ready' });
    expect(ports).toContain(container.livenessProbe.httpGet.port);
    expect(ports).toContain(container.readinessProbe.httpGet.port);
  });

  it('sets CPU and memory requests and limits; the CPU limit (whole CPUs) is what sets the worker count', () => {
    expect(container.resources.requests).toMatchObject({ cpu: expect.anything(), memory: expect.anything() });
    expect(container.resources.limits).toMatchObject({ cpu: expect.anything(), memory: expect.anything() });
    expect(env('WORKERS')).toBeUndefined();
  });

  it('points the scrape annotations at the metrics port, which needs no API key', () => {
    const annotations = deployment.spec.template.metadata.annotations;
    expect(annotations['prometheus.io/scrape']).toBe('true');
    expect(annotations['prometheus.io/port']).toBe(env('METRICS_PORT'));
    expect(container.ports.map((p: any) => String(p.containerPort))).toContain(env('METRICS_PORT'));
    expect(annotations['prometheus.io/path']).toBe('/metrics');
  });

  it('has a PodDisruptionBudget for the Deployment’s pods that leaves replicas up', () => {
    const pdb = byKind('PodDisruptionBudget');
    expect(pdb.apiVersion).toBe('policy/v1');
    expect(pdb.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    expect(pdb.spec.maxUnavailable).toBeLessThan(deployment.spec.replicas);
  });

  it('gives the drain time to finish before the kubelet kills the pod', () => {
    const pauseMs = Number(/setTimeout\(\(\) => \{\}, (\d+)\)/.exec(JSON.stringify(container.lifecycle.preStop.exec.command))?.[1] ?? 0);
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(Number(env('SHUTDOWN_GRACE_MS')) + pauseMs);
  });
});

describe('Dockerfile', () => {
  it('runs as the unprivileged node user with the data directory as its volume', () => {
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/SWITCHYARD_DATA_DIR=\/data/);
    expect(runtime).toMatch(/chown node:node \/data/);
    expect(runtime).toMatch(/^VOLUME \["\/data"\]$/m);
  });

  it('ships only the run-time packages (pruned after the build) and the sandbox host scripts', () => {
    expect(dockerfile).toMatch(/npm run build && node scripts\/runtime-deps\.mjs --prune/);
    expect(runtime).toMatch(/COPY --from=build \/app\/libs\/tools\/code-interpreter\/sandbox\/pyodide\/host/);
    expect(runtime).toMatch(/^CMD \["node", "dist\/apps\/gateway\/src\/main\.js"\]$/m);
  });
});
