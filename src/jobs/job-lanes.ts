/** The lane of every job type registered without one. */
export const DEFAULT_LANE = 'default';

/** Job types that share slots of their own: a lane's jobs never hold another lane's slots. */
export interface JobLane {
  name: string;
  concurrency: number;
  running: number;
  types: string[];
}

/**
 * The worker's lanes: each claims and runs its own types in its own slots, so that long jobs of
 * one kind (a legacy archive's import) never hold the slots every other job needs (summaries,
 * extraction, indexing), nor these theirs.
 */
export class JobLanes {
  private readonly lanes = new Map<string, JobLane>();
  private readonly byType = new Map<string, JobLane>();

  constructor(defaultConcurrency: number) {
    this.declare(DEFAULT_LANE, defaultConcurrency);
  }

  declare(name: string, concurrency: number): void {
    if (this.lanes.has(name)) throw new Error(`job lane ${name} declared twice`);
    this.lanes.set(name, { name, concurrency, running: 0, types: [] });
  }

  assign(type: string, name = DEFAULT_LANE): void {
    const lane = this.lanes.get(name);
    if (!lane) throw new Error(`job type ${type} names lane ${name}, which no module declared`);
    lane.types.push(type);
    this.byType.set(type, lane);
  }

  of(type: string): JobLane {
    return this.byType.get(type)!;
  }

  all(): Iterable<JobLane> {
    return this.lanes.values();
  }
}
