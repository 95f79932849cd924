import {
  byteSize,
  ConfigOf,
  cron,
  defineVariables,
  duration,
  integer,
  oneOf,
  text,
} from '../config/config-spec.js';

export const archivesVariables = defineVariables({
  ARCHIVE_STORE: {
    description:
      'Where finished legacy archives and uploaded ones wait to be downloaded or imported: directory (ARCHIVE_DIR), database (in chunks, in the table legacy_archive_chunks: any instance serves any archive), or auto: directory on the embedded database, database on a server, where another instance may serve the download.',
    default: 'auto',
    parse: oneOf('auto', 'directory', 'database'),
  },
  ARCHIVE_DIR: {
    description:
      'Directory of legacy archives with ARCHIVE_STORE=directory (on a server with several instances, one they all share), and of the files being written or uploaded; unset: DATA_DIR/archives.',
    parse: text,
  },
  ARCHIVE_KEEP: {
    description:
      'How long a finished archive can be downloaded, and an uploaded one imported, before it is deleted (an hourly task).',
    default: '3d',
    parse: duration('10m', '90d'),
  },
  ARCHIVE_CLEANUP_CRON: {
    description: 'When expired archives are deleted.',
    default: '17 * * * *',
    parse: cron,
  },
  ARCHIVE_IMPORT_MAX_BYTES: {
    description:
      'Largest archive that can be uploaded for importLegacyArchive (the ZIP as sent, 2 GB by default).',
    default: '2gb',
    parse: byteSize,
  },
  ARCHIVE_IMPORT_MAX_UNZIPPED_BYTES: {
    description:
      'Most bytes an uploaded archive may unpack to, its entries together: one that declares more is refused unopened, and an entry that unpacks to more than it declared is refused as it is read.',
    default: '4gb',
    parse: byteSize,
  },
  ARCHIVE_IMPORT_MAX_ENTRIES: {
    description: 'Most files an uploaded archive may hold.',
    default: '200000',
    parse: integer(10, 10_000_000),
  },
  ARCHIVE_JOBS_CONCURRENCY: {
    description:
      'Exports and imports of legacy archives run at once by one process, in a lane of their own: they never take the job slots of summaries, extraction or indexing (JOBS_CONCURRENCY), nor these theirs. An import gives way to a waiting export or import every ARCHIVE_IMPORT_SLICE_MS.',
    default: '1',
    parse: integer(1, 16),
  },
  ARCHIVE_IMPORT_SLICE_MS: {
    description:
      "How long an import runs before it gives its slot to another family's archive job waiting for one (it goes on from its cursor right after).",
    default: '2000',
    parse: integer(1, 600_000),
  },
  ARCHIVES_PER_DAY: {
    description: 'Archives one member may ask for or upload per rolling 24 hours.',
    default: '20',
    parse: integer(1, 10_000),
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof archivesVariables> {}
}
