/**
 * The pgvector a server must have. Filtered nearest-neighbour searches set
 * `hnsw.iterative_scan` (vector-sql.ts), which pgvector added in 0.8.0; an older pgvector ignores
 * the setting without a word and a family's nearest rows can then go missing behind other
 * families' rows, so the service refuses to start on one.
 */
export const PGVECTOR_MINIMUM = '0.8.0';

function parts(version: string): number[] {
  return version.split(/[.-]/).map((p) => Number.parseInt(p, 10) || 0);
}

export function versionAtLeast(version: string, minimum: string): boolean {
  const [a, b] = [parts(version), parts(minimum)];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  }
  return true;
}

/**
 * Why the server's pgvector cannot serve (its installed and newest available versions), as one
 * line that says what to do; null when it can.
 */
export function pgvectorProblem(
  where: string,
  installed: string,
  available: string | null,
): string | null {
  if (versionAtLeast(installed, PGVECTOR_MINIMUM)) return null;
  const fix =
    available && versionAtLeast(available, PGVECTOR_MINIMUM)
      ? `the server has pgvector ${available}: run ALTER EXTENSION vector UPDATE in that database`
      : `install pgvector ${PGVECTOR_MINIMUM} or later on that server, then run ALTER EXTENSION vector UPDATE in that database`;
  return (
    `PostgreSQL at ${where} has pgvector ${installed}; Keepsake needs ${PGVECTOR_MINIMUM} or later ` +
    `(its HNSW iterative scan keeps a family's vector searches complete): ${fix}, ` +
    `or unset DATABASE_URL to use the embedded database.`
  );
}
