import {
  ConfigOf,
  ConfigParseError,
  cron,
  defineVariables,
  integer,
  text,
} from '../config/config-spec.js';

/** A cron expression, or `off`. */
const scheduleOrOff = (raw: string): string | null => {
  if (raw.trim().toLowerCase() === 'off') return null;
  try {
    return cron(raw);
  } catch (err) {
    throw new ConfigParseError(`${(err as Error).message}, or off`);
  }
};

export const backupsVariables = defineVariables({
  BACKUP_SCHEDULE: {
    description:
      'Embedded database only: when a backup is due (a cron expression, in UTC), or off. Daily by default, at an hour a family is asleep; a backup the computer was off for is made within the hour after it is on again. A server is backed up with its own tools (see docs/operations.md, Backups).',
    default: '30 3 * * *',
    parse: scheduleOrOff,
  },
  BACKUP_DIR: {
    description:
      'Where scheduled backups are written (unset: DATA_DIR/backups). Point it at another disk, a USB drive or a synced folder: a backup on the same disk does not outlive that disk.',
    parse: text,
  },
  BACKUP_KEEP: {
    description:
      'Scheduled backups kept in BACKUP_DIR; older ones are deleted once a new one is complete. Seven daily backups: a mistake noticed days later can still be undone.',
    default: '7',
    parse: integer(1, 1000),
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof backupsVariables> {}
}
