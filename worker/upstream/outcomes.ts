import { sendToParent, type FromWorker } from '../../shared/ipc.js';
import type { OutcomeKind, OutcomeRuns } from '../../shared/upstream/outcomes.js';

/**
 * A cluster's upstream outcomes on this worker, for the supervisor's outlier detector: appended
 * per response (a number increment in the common case), sent as one message about every
 * FLUSH_MS while there are any. Only clusters with outlier_detection have one.
 */

const FLUSH_MS = 100;

export class OutcomeRecorder {
  private runs = new Map<string, OutcomeRuns>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly cluster: string) {}

  record(address: string, kind: OutcomeKind): void {
    let runs = this.runs.get(address);
    if (!runs) this.runs.set(address, (runs = []));
    const n = runs.length;
    if (n > 0 && runs[n - 2] === kind) (runs[n - 1] as number)++;
    else runs.push(kind, 1);
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), FLUSH_MS);
      this.timer.unref();
    }
  }

  flush(): void {
    this.timer = undefined;
    if (this.runs.size === 0) return;
    const hosts = [...this.runs];
    this.runs = new Map();
    sendToParent<FromWorker>({ type: 'outcomes', cluster: this.cluster, hosts });
  }
}
