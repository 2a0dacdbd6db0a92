/** What the store keeps of a batch; `doc` holds the public fields that change rarely (timestamps, file ids, errors). */
export interface BatchRow {
  id: string;
  owner: string;
  seq: number;
  status: BatchStatus;
  endpoint: string;
  total: number;
  completed: number;
  failed: number;
  expiresAt: number;
  doc: BatchDoc;
}

export type BatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

export const LIVE_BATCH_STATUSES: readonly BatchStatus[] = ['validating', 'in_progress', 'finalizing', 'cancelling'];

export interface BatchError {
  code: string;
  line: number | null;
  message: string;
  param: string | null;
}

export interface BatchDoc {
  input_file_id: string;
  completion_window: string;
  created_at: number;
  metadata: Record<string, string> | null;
  model?: string;
  in_progress_at?: number;
  finalizing_at?: number;
  completed_at?: number;
  failed_at?: number;
  cancelling_at?: number;
  cancelled_at?: number;
  expired_at?: number;
  output_file_id?: string;
  error_file_id?: string;
  errors?: BatchError[];
  usage?: { input_tokens: number; output_tokens: number; total_tokens: number };
}

/** One line of the input file, as stored to run. */
export interface BatchRequestRow {
  line: number;
  customId: string;
  /** The request body, as JSON text. */
  body: string;
}

/** A request this process claimed, with what running it needs. */
export interface ClaimedRequest {
  batchId: string;
  line: number;
  customId: string;
  body: string;
  attempts: number;
  endpoint: string;
  owner: string;
}

/** One finished request's line of the output or error file, in input order. */
export interface BatchResultRow {
  line: number;
  ok: boolean;
  result: string;
}
