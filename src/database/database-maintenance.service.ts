import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/**
 * Upkeep a PostgreSQL server does by itself but the embedded database does not: PGlite runs no
 * autovacuum, so without this its planner never learns the tables' sizes and picks plans for
 * empty tables (sequential scans of every vector) as they grow.
 */
@Injectable()
export class DatabaseMaintenanceService {
  constructor(private readonly dataSource: DataSource) {}

  /** Refreshes the planner statistics of every table; returns how long it took. */
  async analyze(): Promise<number> {
    const started = performance.now();
    await this.dataSource.query('ANALYZE');
    return performance.now() - started;
  }
}
