/**
 * A table that scrolls sideways on a narrow screen: a named region that keyboard users can
 * focus to scroll it.
 */
export function TableWrap({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div className="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
