/** A WAL position (`pg_lsn`, written `16/B374D848`) as a number of bytes, to compare and subtract. */
export function parseLsn(text: string | null | undefined): bigint | null {
  if (!text) return null;
  const m = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i.exec(text.trim());
  if (!m) throw new Error(`not a WAL position: ${text}`);
  return (BigInt(`0x${m[1]}`) << 32n) + BigInt(`0x${m[2]}`);
}

/** A WAL position as PostgreSQL writes it. */
export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

/**
 * The primary's WAL positions taken lately, with when: how far behind a replica is in time is
 * how long ago the primary first wrote past the position the replica has replayed.
 */
export class PositionHistory {
  private readonly samples: { at: number; lsn: bigint }[] = [];

  constructor(private readonly keepMs: number) {}

  add(lsn: bigint, at = Date.now()): void {
    const last = this.samples[this.samples.length - 1];
    // Nothing new written: kept as the time the primary first got there, which lag reads.
    if (last && last.lsn === lsn) return;
    // Behind the newest: another server is the primary now (a failover); start again.
    if (last && lsn < last.lsn) this.samples.length = 0;
    this.samples.push({ at, lsn });
    while (this.samples.length > 2 && this.samples[0].at < at - this.keepMs) this.samples.shift();
  }

  /** The newest position taken, or null before the first. */
  get latest(): bigint | null {
    return this.samples.length ? this.samples[this.samples.length - 1].lsn : null;
  }

  /**
   * How long, in ms, `replayed` has been behind: since the first sample past it (0 when none
   * is). With every sample past it, at least as long as the history reaches back.
   */
  lagMs(replayed: bigint, now = Date.now()): number {
    const past = this.samples.find((s) => s.lsn > replayed);
    return past ? Math.max(0, now - past.at) : 0;
  }
}
