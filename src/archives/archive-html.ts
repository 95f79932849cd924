import type {
  ArchivedConversation,
  ArchivedFact,
  ArchivedLegacy,
  ArchivedMemory,
  ArchivedPeriodSummary,
  ArchivedStory,
  ArchivedTurn,
} from './archive-format.js';

/**
 * The pages of an archive, to read it in any browser without Keepsake: plain HTML with its
 * style inline, no script, nothing fetched from anywhere (a Content-Security-Policy says so to
 * the browser), links relative to the ZIP's own files. Every text from the archive is escaped.
 */

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** A path inside the ZIP as an href: each segment percent-encoded. */
export function hrefOf(path: string): string {
  return path
    .split('/')
    .map((segment) => encodeURIComponent(segment))
    .join('/');
}

const STYLE = `body{font:16px/1.5 Georgia,serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#222;background:#fdfcf9}
h1,h2,h3{font-family:system-ui,sans-serif;line-height:1.25}h2{margin-top:2.5rem;border-bottom:1px solid #ddd;padding-bottom:.25rem}
.meta{color:#666;font-size:.85rem;font-family:system-ui,sans-serif}ul.items{padding-left:1.2rem}ul.items li{margin:.5rem 0}
.turn{margin:1rem 0;padding:.5rem .75rem;border-left:3px solid #c9b99a;background:#fff}.turn.assistant{border-color:#9ab3c9}
.turn.note{color:#777;font-style:italic}.text{white-space:pre-wrap}nav a{margin-right:1rem}
.tags span{display:inline-block;background:#eee;border-radius:3px;padding:0 .35rem;margin:0 .25rem .25rem 0;font-size:.85rem}`;

/** The top of a page; `depth` is how many folders below the ZIP's root it is. */
export function pageStart(title: string, depth: number): string {
  const up = '../'.repeat(depth);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src 'self'">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>
${depth > 0 ? `<nav><a href="${up}index.html">Back to the legacy</a></nav>` : ''}
`;
}

export function pageEnd(): string {
  return `<p class="meta">Made by Keepsake. The same content, machine-readable, is in keepsake.json and data/.</p>
</body></html>
`;
}

const day = (iso: string | null) => (iso ? iso.slice(0, 10) : '');
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function names(people: ReadonlyMap<string, string | null>, id: string): string {
  return people.get(id) ?? 'A member';
}

export function legacyHeader(
  legacy: ArchivedLegacy,
  exportedBy: string,
  exportedAt: string,
): string {
  const dates = [legacy.bornOn, legacy.diedOn].filter(Boolean).join(' – ');
  return `<h1>${escapeHtml(legacy.name)}</h1>
${dates ? `<p class="meta">${escapeHtml(dates)}</p>` : ''}
${legacy.description ? `<p class="text">${escapeHtml(legacy.description)}</p>` : ''}
<p class="meta">What ${escapeHtml(exportedBy)} could see of this legacy on ${escapeHtml(day(exportedAt))}.</p>
<nav><a href="#facts">Facts</a><a href="#stories">Stories</a><a href="#conversations">Conversations</a><a href="#memories">Memories</a><a href="#periods">Looking back</a></nav>
`;
}

export function sectionStart(id: string, title: string): string {
  return `<h2 id="${id}">${escapeHtml(title)}</h2>\n<ul class="items">\n`;
}

/** Closes a section; one with no item says so. */
export function sectionEnd(count: number, empty: string): string {
  return `</ul>\n${count === 0 ? `<p class="meta">${escapeHtml(empty)}</p>\n` : ''}`;
}

export function factItem(fact: ArchivedFact, people: ReadonlyMap<string, string | null>): string {
  const status = fact.status === 'ACTIVE' ? '' : `, ${fact.status.toLowerCase()}`;
  return `<li>${escapeHtml(fact.content)} <span class="meta">(${fact.category.toLowerCase()}, ${fact.visibility.toLowerCase()}${status}; ${escapeHtml(names(people, fact.authorId))}, ${day(fact.createdAt)})</span></li>\n`;
}

export function storyItem(
  story: ArchivedStory,
  people: ReadonlyMap<string, string | null>,
  page: string,
): string {
  const when = story.occurredAt ? `${day(story.occurredAt)}, ` : '';
  return `<li><a href="${hrefOf(page)}">${escapeHtml(story.title)}</a> <span class="meta">(${when}${escapeHtml(names(people, story.authorId))}, ${story.visibility.toLowerCase()}) · <a href="${hrefOf(story.file)}">original file</a></span></li>\n`;
}

export function storyPage(
  story: ArchivedStory,
  people: ReadonlyMap<string, string | null>,
): string {
  const file = story.file.split('/').slice(1).join('/');
  const pages = story.pages
    .map(
      (p) =>
        `${story.pages.length > 1 ? `<h3>Page ${p.number}</h3>` : ''}<div class="text">${escapeHtml(p.text)}</div>`,
    )
    .join('\n');
  return `${pageStart(story.title, 1)}<h1>${escapeHtml(story.title)}</h1>
<p class="meta">${escapeHtml(names(people, story.authorId))}${story.occurredAt ? `, ${day(story.occurredAt)}` : ''} · <a href="${hrefOf(file)}">the original file</a></p>
${pages}
${pageEnd()}`;
}

export function conversationItem(c: ArchivedConversation): string {
  return `<li><a href="${hrefOf(c.page)}">${escapeHtml(c.title ?? 'A conversation')}</a> <span class="meta">(${plural(c.turnCount, 'turn')}, ${day(c.createdAt)} to ${day(c.lastActivityAt)}${c.participants.length > 1 ? ', together' : ''})</span></li>\n`;
}

export function conversationStart(
  c: ArchivedConversation,
  people: ReadonlyMap<string, string | null>,
): string {
  const who = c.participants.map((id) => names(people, id)).join(', ');
  return `${pageStart(c.title ?? 'A conversation', 1)}<h1>${escapeHtml(c.title ?? 'A conversation')}</h1>
<p class="meta">${escapeHtml(who)} · ${day(c.createdAt)}</p>
`;
}

export function turnItem(t: ArchivedTurn, people: ReadonlyMap<string, string | null>): string {
  const speaker =
    t.role === 'USER' ? names(people, t.authorId) : `The agent, to ${names(people, t.authorId)}`;
  const kind = t.placeholder || t.withheld ? 'note' : t.role === 'ASSISTANT' ? 'assistant' : 'user';
  return `<div class="turn ${kind}"><div class="meta">${escapeHtml(speaker)} · ${escapeHtml(t.occurredAt.slice(0, 16).replace('T', ' '))}</div><div class="text">${escapeHtml(t.content)}</div></div>\n`;
}

export function memoryItem(m: ArchivedMemory): string {
  const status = m.status === 'ACTIVE' ? '' : `, ${m.status.toLowerCase()}`;
  return `<li>${escapeHtml(m.content)} <span class="meta">(${m.type.toLowerCase()}${status}, ${day(m.createdAt)})</span></li>\n`;
}

export function periodItem(p: ArchivedPeriodSummary): string {
  const tags = (label: string, values: string[]) =>
    values.length
      ? `<div class="tags meta">${label}: ${values.map((v) => `<span>${escapeHtml(v)}</span>`).join('')}</div>`
      : '';
  return `<li><strong>${p.period.toLowerCase()} of ${p.start}</strong> <span class="meta">(${p.start} to ${p.end}, ${plural(p.conversationCount, 'conversation')}, ${plural(p.turnCount, 'turn')}${p.emotionalTone ? `, ${escapeHtml(p.emotionalTone)}` : ''})</span>
<div class="text">${escapeHtml(p.summary)}</div>${tags('Themes', p.keyThemes)}${tags('People', p.people)}${tags('Places', p.places)}</li>\n`;
}
