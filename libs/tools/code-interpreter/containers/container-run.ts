import { imageMediaType } from '../code-interpreter-call.js';
import type { CodeInterpreterSettings } from '../config/code-interpreter-settings.js';
import type { SandboxBackend, SandboxRunResult } from '../sandbox/sandbox-backend.interface.js';
import type { Container, ContainerFile } from './container-store.service.js';

/** Images larger than this are linked (container file content) rather than inlined as data URLs. */
const INLINE_IMAGE_BYTES = 1024 * 1024;

/** How one run went, as the home reports it (plain JSON: it may travel to the process that asked). */
export interface RunOutcome {
  status: 'ok' | 'error' | 'failed';
  /** The sandbox's own word (`timeout`, `memory`, ...), for the log. */
  sandboxStatus: string;
  logs: string;
  files: Array<{ fileId: string; path: string }>;
  images: Array<{ fileId: string; url: string }>;
  notes: string[];
}

export interface RunPlace {
  settings: CodeInterpreterSettings;
  backend: SandboxBackend;
  /** What is left of the owner's quota of container bytes. */
  room(): Promise<number>;
  recordChanges(changed: readonly string[]): Promise<{ files: ContainerFile[]; refused: string[] }>;
  read(f: ContainerFile): Promise<Buffer>;
}

function logsOf(r: SandboxRunResult): string {
  let logs = r.stdout + r.stderr;
  // A run the sandbox stopped before the program printed anything still has logs, as OpenAI's item does: what stopped it.
  if (!logs && r.status !== 'ok' && r.status !== 'error' && r.message) logs = `${r.message}\n`;
  if (r.outputTruncated) logs += '\n[output truncated: the program printed more than the sandbox keeps]\n';
  return logs;
}

/**
 * One program in the container's workspace, on its home: the sandbox run,
 * the files it wrote recorded (within the container's budget), images
 * inlined, and the notes the model must read (a reset session first).
 */
export async function runInContainer(place: RunPlace, c: Container, notice: string | null, code: string, signal: AbortSignal): Promise<RunOutcome> {
  const { settings } = place;
  const notes: string[] = notice ? [notice] : [];
  if (c.calls >= settings.maxCallsPerContainer) {
    return {
      status: 'failed',
      sandboxStatus: 'limit',
      logs: '',
      files: [],
      images: [],
      notes: [...notes, `This conversation has used its ${settings.maxCallsPerContainer} code runs.`],
    };
  }
  const priorCalls = c.calls++;
  // What the run may add: the container's room and its owner's, whichever is less.
  const held = [...c.files.values()].reduce((n, f) => n + f.bytes, 0);
  const room = Math.max(0, Math.min(settings.maxContainerBytes - held, await place.room()));
  const result = await place.backend.run({
    session: c.id,
    workspaceDir: c.dir,
    code,
    signal,
    priorCalls,
    limits: {
      timeoutMs: settings.timeoutMs,
      graceMs: settings.graceMs,
      memoryLimitMb: settings.memoryLimitMb,
      maxOutputBytes: settings.maxOutputBytes,
      maxFileBytes: Math.min(settings.maxFileBytesPerCall, room),
      maxWorkspaceBytes: held + room,
    },
  });
  const recorded = await place.recordChanges(result.changedFiles);
  const images: RunOutcome['images'] = [];
  for (const f of recorded.files) {
    const media = imageMediaType(f.path);
    if (!media) continue;
    // Replaced by a link since the run (a background process of the program): not shown.
    const inline = f.bytes <= INLINE_IMAGE_BYTES ? await place.read(f).catch(() => undefined) : undefined;
    if (f.bytes <= INLINE_IMAGE_BYTES && !inline) continue;
    const url = inline ? `data:${media};base64,${inline.toString('base64')}` : `/v1/containers/${c.id}/files/${f.id}/content`;
    images.push({ fileId: f.id, url });
  }
  if (result.message) notes.push(result.message);
  if (result.filesTruncated) notes.push(`Some files were not kept: one run may write at most ${settings.maxFileBytesPerCall} bytes.`);
  if (recorded.refused.length) notes.push(`Not kept (the container or its owner's quota is full): ${recorded.refused.map((p) => `/mnt/data/${p}`).join(', ')}.`);
  // A run whose files did not fit is a failed call: the model must not take them for written.
  const overQuota = recorded.refused.length > 0 || (result.filesTruncated && room < settings.maxFileBytesPerCall);
  return {
    status: overQuota ? 'failed' : result.status === 'ok' ? 'ok' : result.status === 'error' ? 'error' : 'failed',
    sandboxStatus: result.status,
    logs: logsOf(result),
    files: recorded.files.map((f) => ({ fileId: f.id, path: `/mnt/data/${f.path}` })),
    images,
    notes,
  };
}
