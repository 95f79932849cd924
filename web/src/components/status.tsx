import type { CombinedError } from 'urql';
import { errorMessage } from '../lib/format';

/** A failed operation, announced to screen readers. */
export function ErrorNote({ error }: { error: CombinedError | string | null | undefined }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {typeof error === 'string' ? error : errorMessage(error)}
    </p>
  );
}

/** A polite live region for results of actions ("Fact shared", "Imported 3 memories"). */
export function StatusNote({ children }: { children: React.ReactNode }) {
  return (
    <p className="status" role="status" aria-live="polite">
      {children}
    </p>
  );
}
