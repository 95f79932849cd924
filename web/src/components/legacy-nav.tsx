import { Link, useLocation } from 'wouter';

/** The sections of one legacy. */
export function LegacyNav({ legacyId, name }: { legacyId: string; name?: string }) {
  const [location] = useLocation();
  const base = `/legacies/${legacyId}`;
  const tabs = [
    { href: base, label: 'Overview' },
    { href: `${base}/facts`, label: 'Facts' },
    { href: `${base}/conversations`, label: 'Conversations' },
    { href: `${base}/stories`, label: 'Stories' },
    { href: `${base}/recall`, label: 'Recall' },
    { href: `${base}/looking-back`, label: 'Looking back' },
  ];
  return (
    <nav aria-label={name ? `${name} sections` : 'Legacy sections'} className="tabs">
      {tabs.map((tab) => (
        <Link
          key={tab.href}
          href={tab.href}
          aria-current={
            location === tab.href || (tab.href !== base && location.startsWith(`${tab.href}/`))
              ? 'page'
              : undefined
          }
        >
          {tab.label}
        </Link>
      ))}
    </nav>
  );
}
