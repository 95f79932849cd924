/**
 * npm run bench:periods -- [--years 2] [--per-week 2] [--timezone Europe/London]
 *                          [--llm local|fake] [--embeddings local|fake] [--poll-ms 1000]
 *                          [--keep] (with DATABASE_URL: leave the database on the server)
 *
 * How long a backfill of period summaries (weekly, monthly, yearly) takes over a member's whole
 * history: the real application on a fresh embedded database (or, with DATABASE_URL, on that
 * server, in a database of its own, dropped afterwards), its job worker running in-process.
 * One member in `--timezone` imports `--years` years of evening conversations about their
 * grandfather, ending with the last full ISO week before today: on average `--per-week` a week
 * (seeded, so runs are comparable; some weeks none, holidays), 6 to 24 turns each, USER turns
 * with a seasonal flavour by month. Once indexing and rolling summarization have settled
 * (threshold THRESHOLD, batch BATCH, so that longer conversations have chunks and shorter ones
 * are read as turns), `backfillPeriodSummaries` is called for the whole range and
 * `periodSummaryProgress` polled until done. Reports the backfill call's latency, the time until
 * done, the periods queued, stored (by kind) and empty, periods per second and the model calls
 * for period summaries, checks them against the calendar and the generated history, and shows
 * the latest month's summary and the start of a year's. `--llm local` is the offline heuristic
 * aggregate; `--llm fake` the scripted OpenAI-compatible test server, which with
 * `--embeddings fake` is the embedder too. The worker runs one job at a time on the embedded
 * database and looks for the next one every JOBS_POLL_MS (`--poll-ms`, the service's default
 * when not given), which bounds jobs per second: a smaller value shows the work itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { createApp } from '../src/bootstrap.js';
import { loadAppConfig } from '../src/app.config.js';
import { DatabaseUsageRecorder } from '../src/llm/database-usage.recorder.js';
import { MODEL_USAGE_RECORDER } from '../src/llm/model-usage.js';
import type { ModelUsageRecorder } from '../src/llm/model-usage.js';
import { SCHEMA_NAME } from '../src/llm/prompts.js';
import {
  LocalDay,
  addDays,
  dayStartsAt,
  isDue,
  localDayOf,
  periodStartOf,
  periodsTouching,
  zoneOrUtc,
} from '../src/periods/period-calendar.js';
import { PERIOD_JOB } from '../src/periods/period-summary-builder.service.js';
import { FakeOpenAiServer } from '../test/support/fake-openai/fake-openai.server.js';
import { BENCH_LIMITS, benchDatabase, JWT_SECRET, token, rng } from './support.js';

const THRESHOLD = 10;
const BATCH = 8;
const POLL_MS = 100;
const LEGACY_NAME = 'Grandad Arthur';

function options() {
  const { values } = parseArgs({
    options: {
      years: { type: 'string', default: '2' },
      'per-week': { type: 'string', default: '2' },
      timezone: { type: 'string', default: 'Europe/London' },
      llm: { type: 'string', default: 'local' },
      embeddings: { type: 'string', default: 'local' },
      'poll-ms': { type: 'string' },
      keep: { type: 'boolean', default: false },
    },
  });
  const years = Number(values.years);
  const perWeek = Number(values['per-week']);
  if (!Number.isInteger(years) || years < 1 || years > 10) {
    throw new Error('--years must be a whole number from 1 to 10');
  }
  if (!Number.isFinite(perWeek) || perWeek <= 0 || perWeek > 7) {
    throw new Error('--per-week must be a number above 0, at most 7');
  }
  if (zoneOrUtc(values.timezone) !== values.timezone) {
    throw new Error(`--timezone ${values.timezone} is not a time zone this runtime knows`);
  }
  if (values.llm !== 'local' && values.llm !== 'fake') {
    throw new Error('--llm must be local or fake');
  }
  if (values.embeddings !== 'fake' && values.embeddings !== 'local') {
    throw new Error('--embeddings must be fake or local');
  }
  const pollMs = values['poll-ms'];
  if (pollMs !== undefined && !/^\d+$/.test(pollMs)) {
    throw new Error('--poll-ms must be a whole number of milliseconds (JOBS_POLL_MS)');
  }
  return {
    years,
    perWeek,
    timezone: values.timezone,
    llm: values.llm,
    embeddings: values.embeddings,
    pollMs,
    keep: values.keep,
  };
}

async function gql<T>(url: string, query: string, variables: Record<string, unknown> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token('bench')}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: { message: string }[] };
  if (body.errors?.length) throw new Error(body.errors[0].message);
  return body.data as T;
}

/** What a member says about their grandfather, any time of year. */
const ANY_MONTH = [
  'Grandad Arthur spent every spare hour in his garden, and the runner beans were his pride.',
  'He taught me to make his Yorkshire puddings, and he never measured anything.',
  'We went on a trip to the coast at Whitby and ate fish and chips on the harbour wall.',
  'His workshop smelled of sawdust and linseed oil, and he let me hold the chisels.',
  'He used to sing Danny Boy while he washed up, badly and loudly.',
  'He told war stories about the convoy ships, but only when Gran was out of the room.',
  'Some days I still pick up the phone to call him before I remember he is gone.',
  'We laughed so much the day Biscuit the dog ran off with the Sunday joint.',
  'His sister Ruth says he was the cheekiest boy in Halifax.',
  'He grew up in Halifax, above the bakery on King Cross Road.',
  'He kept every letter Gran ever wrote him in a biscuit tin under the bed.',
  'He fixed my bicycle in his workshop and made me tighten the last bolt myself.',
  'His rhubarb crumble recipe is written on the back of a bus ticket.',
  'He could name every bird in the garden by its song.',
  'I miss the way he whistled coming up the path.',
  'Biscuit used to sleep on his slippers, and he pretended to be annoyed.',
  'Ruth sent me a photo of the two of them as children on the beach at Scarborough.',
  'He worked at the mill for thirty-one years and never missed a shift.',
  'He said the secret of a good stew was patience and a splash of brown sauce.',
  'He built the bird table in his workshop from an old door.',
  'He always had a pencil behind his ear.',
  'He danced with Gran in the kitchen to the radio when he thought nobody was looking.',
  'I found his old toolbox and cried when I saw his handwriting on the labels.',
  'He made up silly songs about the dog, and we still sing them.',
  'He took me fishing off the pier and we never caught a thing.',
  'He kept his medals in a drawer and would not talk about most of them.',
  'Ruth says he carried her home on his shoulders after the Halifax gala.',
  'He read the newspaper out loud at breakfast and argued with it.',
  'Dad says Grandad was strict, but he was never strict with me.',
  'His tomatoes in the greenhouse were the best in the street, he said so himself.',
  'The smell of pipe tobacco still makes me think of him.',
  'He taught me to play dominoes at the Working Men’s Club.',
  'I keep his flat cap on the hook by my door.',
  'The grief comes in waves: some weeks are fine, and then a song undoes me.',
  'He used to say worse things happen at sea whenever anything went wrong.',
  'We drove to Whitby in his old Morris Minor and it broke down on the moors.',
  'He made the best bacon sandwiches and burnt the toast every single time.',
  'He wrote to his sister Ruth every Sunday, even when they lived two streets apart.',
  'I laughed remembering how Biscuit stole a whole pork pie at the wedding.',
  'I wish I had asked him more about the war while I still could.',
  'He whittled a little wooden dog for me that I still keep on my desk.',
];

/** What the time of year brings back: January first. */
const BY_MONTH = [
  [
    'It is the anniversary of his death this month and I have been feeling low.',
    'He loved a snowy January walk up to the reservoir.',
    'He would sit with his seed catalogues by the fire, planning the garden.',
  ],
  [
    'He always bought Gran daffodils for Valentine’s Day instead of roses.',
    'In February he sharpened every tool in the workshop ready for spring.',
    'Pancake Day was his big occasion, he tossed them right up to the ceiling.',
  ],
  [
    'He planted his first early potatoes on St Patrick’s Day without fail.',
    'The daffodils he planted along the wall are out again.',
    'He took me to see the newborn lambs at the farm up the hill.',
  ],
  [
    'At Easter he hid chocolate eggs all over the garden.',
    'April showers meant he was in the greenhouse potting on seedlings.',
    'His birthday was in April and he always wanted a pork pie, not a cake.',
  ],
  [
    'The bluebell wood behind his house was his favourite place in May.',
    'He spent May evenings at the allotment earthing up the potatoes.',
    'He took us to the May Day fair and won a goldfish for me.',
  ],
  [
    'Every June we went to the coast at Whitby and climbed the 199 steps to the abbey.',
    'He picked the first strawberries of June and gave me the biggest one.',
    'He mowed the lawn in stripes for midsummer and was very proud of it.',
  ],
  [
    'In July he listened to the cricket on the radio in his workshop.',
    'The sweet peas he grew filled the house with scent in July.',
    'He swam in the cold sea at Robin Hood’s Bay and called us soft for staying out.',
  ],
  [
    'We went blackberry picking along the canal every August.',
    'On hot August nights he sat out on the step and sang old songs.',
    'He made plum jam, and the kitchen was sticky for a week.',
  ],
  [
    'September was harvest time and he gave his marrows away to the whole street.',
    'He polished my school shoes every September before term started.',
    'He picked the apples from the old tree and wrapped each one in newspaper.',
  ],
  [
    'He found us the biggest conkers in the park every October.',
    'He built the bonfire for weeks before Bonfire Night.',
    'He carved turnip lanterns for Halloween, and they were terrifying.',
  ],
  [
    'On Remembrance Sunday he wore his poppy and his medals and went quiet.',
    'November is when he told the war stories about the Arctic convoys to Murmansk.',
    'He lit the first fire of the winter and made toast on the long brass fork.',
  ],
  [
    'At Christmas he played carols on the old piano, always too fast.',
    'His Christmas pudding had a sixpence in it, and he always rigged it for me.',
    'Christmas without him is the hardest time, I miss him most then.',
  ],
];

const FOLLOW_UPS = [
  'What do you remember most about that?',
  'How old were you then?',
  'Who else was there?',
  'How does it feel to think about it now?',
  'What did he say when that happened?',
  'Was that a regular thing for him?',
  'Do you still have anything from that time?',
  'What was his workshop like?',
  'What would you tell him about it today?',
  'How did your gran feel about that?',
  'What happened next?',
  'Does Ruth remember it the same way?',
  'What did it smell or sound like?',
  'Would you like to keep that tradition going?',
  'Which part makes you smile the most?',
];

interface Conversation {
  day: LocalDay;
  title: string;
  messages: { role: 'USER' | 'ASSISTANT'; content: string; occurredAt: string }[];
}

/** Knuth's method: fine for the small means here. */
function poisson(random: () => number, mean: number): number {
  const limit = Math.exp(-mean);
  let k = 0;
  for (let p = random(); p > limit; p *= random()) k++;
  return k;
}

/** The member's history, oldest first: weeks from `from` (a Monday), evenings in `zone`. */
function history(
  random: () => number,
  from: LocalDay,
  weeks: number,
  perWeek: number,
  zone: string,
): Conversation[] {
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
  // Holidays first (a week in twenty starts one, of one to three weeks), then the rate that
  // keeps the average at perWeek over the whole range.
  const away: boolean[] = [];
  for (let w = 0, left = 0; w < weeks; w++) {
    if (left === 0 && random() < 0.05) left = 1 + Math.floor(random() * 3);
    away.push(left > 0);
    if (left > 0) left--;
  }
  const present = away.filter((a) => !a).length;
  const mean = present > 0 ? (perWeek * weeks) / present : 0;
  const out: Conversation[] = [];
  for (let w = 0; w < weeks; w++) {
    if (away[w]) continue;
    const n = Math.min(7, poisson(random, mean));
    const days = new Set<number>();
    while (days.size < n) days.add(Math.floor(random() * 7));
    for (const d of [...days].sort((a, b) => a - b)) {
      const day = addDays(from, w * 7 + d);
      const seasonal = BY_MONTH[Number(day.slice(5, 7)) - 1];
      // Between 18:00 and 22:00 local time; 24 turns two minutes apart end before midnight.
      let at = dayStartsAt(day, zone).getTime() + (18 * 60 + Math.floor(random() * 240)) * 60_000;
      const turns = 6 + Math.floor(random() * 19);
      const said = new Set<string>();
      const messages: Conversation['messages'] = [];
      for (let i = 0; i < turns; i++) {
        let content: string;
        if (i % 2 === 1) content = pick(FOLLOW_UPS);
        else {
          do content = random() < 0.45 ? pick(seasonal) : pick(ANY_MONTH);
          while (said.has(content) && said.size < 30);
          said.add(content);
        }
        messages.push({
          role: i % 2 === 0 ? 'USER' : 'ASSISTANT',
          content,
          occurredAt: new Date(at).toISOString(),
        });
        at += 60_000 + Math.floor(random() * 60_000);
      }
      out.push({ day, title: `Remembering Grandad, ${day}`, messages });
    }
  }
  return out;
}

async function main(): Promise<void> {
  const opts = options();
  const fake =
    opts.llm === 'fake' || opts.embeddings === 'fake' ? await FakeOpenAiServer.start() : null;
  const dataDir = mkdtempSync(join(tmpdir(), 'keepsake-periods-bench-'));
  const server = process.env.DATABASE_URL ? await benchDatabase(process.env.DATABASE_URL) : null;
  const config = loadAppConfig({
    ...BENCH_LIMITS,
    DATA_DIR: dataDir,
    ...(server ? { DATABASE_URL: server.url } : {}),
    JWT_SECRET,
    LOG_LEVEL: 'silent',
    AGENT_REPLY: 'off',
    JOBS_SCHEDULER: 'false',
    ...(opts.pollMs !== undefined ? { JOBS_POLL_MS: opts.pollMs } : {}),
    SUMMARIZATION_THRESHOLD: String(THRESHOLD),
    SUMMARIZATION_BATCH: String(BATCH),
    // One member imports a few hundred conversations at once.
    CONVERSATIONS_PER_USER_PER_DAY: '1000000',
    IMPORTS_PER_USER_PER_HOUR: '1000000',
    ...(opts.llm === 'fake' && fake
      ? { LLM: 'openai', LLM_BASE_URL: fake.url, LLM_MODEL: 'fake', MODEL_MAX_RETRIES: '0' }
      : {}),
    ...(opts.embeddings === 'fake' && fake
      ? {
          EMBEDDINGS: 'openai',
          EMBEDDINGS_BASE_URL: fake.url,
          EMBEDDINGS_MODEL: 'fake-embed',
          EMBEDDINGS_DIMENSIONS: '512',
        }
      : {}),
  });
  const app = await createApp(config);
  try {
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    const url = `http://127.0.0.1:${port}/graphql`;
    const ds = app.get(DataSource);
    const zone = opts.timezone;
    await gql(url, 'mutation($tz: String!) { updateMe(input: { timezone: $tz }) { id } }', {
      tz: zone,
    });
    const { createLegacy } = await gql<{ createLegacy: { id: string } }>(
      url,
      'mutation($name: String!) { createLegacy(input: { name: $name }) { id } }',
      { name: LEGACY_NAME },
    );
    const legacyId = createLegacy.id;

    // The range: whole ISO weeks in the member's zone, the last one ended before this one.
    const thisMonday = periodStartOf('WEEK', localDayOf(new Date(), zone));
    const weeks = Math.round((opts.years * 365.25) / 7);
    const from = addDays(thisMonday, -7 * weeks);
    const to = addDays(thisMonday, -1);
    const conversations = history(rng(42), from, weeks, opts.perWeek, zone);
    const turns = conversations.reduce((n, c) => n + c.messages.length, 0);

    const t0 = performance.now();
    for (const c of conversations) {
      await gql(
        url,
        `mutation($input: ImportConversationInput!) {
           importConversation(input: $input) { importedCount } }`,
        { input: { legacyId, title: c.title, messages: c.messages } },
      );
    }
    const importS = (performance.now() - t0) / 1000;

    // Settled: no job of any kind waiting or running (indexing, summarization, extraction).
    const busy = async (type?: string) => {
      const [row] = await ds.query(
        `SELECT count(*)::int AS n FROM jobs
          WHERE status IN ('PENDING', 'RUNNING') AND ($1::text IS NULL OR type = $1)`,
        [type ?? null],
      );
      return row.n as number;
    };
    while ((await busy()) > 0) {
      if (performance.now() - t0 > 30 * 60_000) throw new Error('did not settle in 30 minutes');
      await new Promise((r) => setTimeout(r, 50));
    }
    const settleS = (performance.now() - t0) / 1000;
    const settledJobs: { type: string; n: number }[] = await ds.query(
      `SELECT type, count(*)::int AS n FROM jobs GROUP BY type ORDER BY type`,
    );
    const [chunks] = await ds.query(
      `SELECT count(*)::int AS n, coalesce(sum(turn_count), 0)::int AS turns
         FROM conversation_chunks WHERE legacy_id = $1`,
      [legacyId],
    );

    // The backfill: one call, then its progress until nothing is pending.
    interface Progress {
      id: string;
      total: number;
      stored: number;
      empty: number;
      skipped: number;
      pending: number;
      done: boolean;
    }
    const fields = 'id total stored empty skipped pending done';
    const b0 = performance.now();
    const { backfillPeriodSummaries: queued } = await gql<{ backfillPeriodSummaries: Progress }>(
      url,
      `mutation($input: BackfillPeriodSummariesInput!) {
         backfillPeriodSummaries(input: $input) { ${fields} } }`,
      { input: { legacyId, from, to } },
    );
    const backfillMs = performance.now() - b0;
    let progress = queued;
    let polls = 0;
    while (!progress.done && performance.now() - b0 < 30 * 60_000) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      polls++;
      progress = (
        await gql<{ periodSummaryProgress: Progress }>(
          url,
          `query($id: ID!) { periodSummaryProgress(id: $id) { ${fields} } }`,
          { id: queued.id },
        )
      ).periodSummaryProgress;
    }
    const doneS = (performance.now() - b0) / 1000;
    while ((await busy(PERIOD_JOB)) > 0 && performance.now() - b0 < 30 * 60_000) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const idleS = (performance.now() - b0) / 1000;
    const periodJobsBusy = await busy(PERIOD_JOB);

    const recorder = app.get<ModelUsageRecorder>(MODEL_USAGE_RECORDER);
    if (recorder instanceof DatabaseUsageRecorder) await recorder.flush();
    const byPeriod: { period: string; n: number }[] = await ds.query(
      `SELECT period, count(*)::int AS n FROM period_summaries
        WHERE legacy_id = $1 AND deleted_at IS NULL GROUP BY period`,
      [legacyId],
    );
    const stored = (period: string) => byPeriod.find((r) => r.period === period)?.n ?? 0;
    const [calls] = await ds.query(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE NOT ok)::int AS failed,
              coalesce(sum(duration_ms), 0)::int AS ms
         FROM model_calls WHERE task = 'summarizePeriod'`,
    );
    const [jobs] = await ds.query(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE attempts > 1)::int AS retried,
              count(*) FILTER (WHERE status = 'FAILED')::int AS failed
         FROM jobs WHERE type = $1`,
      [PERIOD_JOB],
    );
    const fakeCalls = fake
      ? fake.requests.filter(
          (r) => r.body.response_format?.json_schema?.name === SCHEMA_NAME.summarizePeriod,
        ).length
      : null;

    // What the calendar and the generated history say there must be.
    const now = new Date();
    const due = (period: 'WEEK' | 'MONTH' | 'YEAR') =>
      periodsTouching(period, from, to).filter((s) => isDue(period, s, zone, now));
    const talked = (period: 'WEEK' | 'MONTH' | 'YEAR') =>
      new Set(conversations.map((c) => periodStartOf(period, c.day)));
    const expected = (period: 'WEEK' | 'MONTH' | 'YEAR') => {
      const starts = due(period);
      const had = talked(period);
      return { due: starts.length, stored: starts.filter((s) => had.has(s)).length };
    };
    const [expWeeks, expMonths, expYears] = [expected('WEEK'), expected('MONTH'), expected('YEAR')];
    const expTotal = expWeeks.due + expMonths.due + expYears.due;
    const expStored = expWeeks.stored + expMonths.stored + expYears.stored;
    const rowsStored = stored('WEEK') + stored('MONTH') + stored('YEAR');

    type Summary = {
      start: string;
      end: string;
      summary: string;
      keyThemes: string[];
      emotionalTone: string | null;
      recurringPatterns: string[];
      people: string[];
      places: string[];
      conversationCount: number;
      turnCount: number;
    };
    const latest = async (period: 'MONTH' | 'YEAR') =>
      (
        await gql<{ periodSummaries: { nodes: Summary[] } }>(
          url,
          `query($legacyId: ID!, $period: SummaryPeriod) {
             periodSummaries(legacyId: $legacyId, period: $period, first: 1) {
               nodes { start end summary keyThemes emotionalTone recurringPatterns people places
                       conversationCount turnCount } } }`,
          { legacyId, period },
        )
      ).periodSummaries.nodes[0];
    const month = await latest('MONTH');
    const year = await latest('YEAR');

    const rows: [string, string][] = [
      ['range', `${from} to ${to} (${weeks} weeks, ${zone})`],
      ['conversations imported', `${conversations.length} (${importS.toFixed(1)} s)`],
      ['turns imported', String(turns)],
      [
        'settled after (indexing, summarization)',
        `${settleS.toFixed(1)} s: ${settledJobs.map((j) => `${j.type} ${j.n}`).join(', ')}`,
      ],
      ['conversation chunks', `${chunks.n} (${chunks.turns} turns)`],
      ['backfill call', `${backfillMs.toFixed(0)} ms`],
      ['done after', `${doneS.toFixed(2)} s (${polls} polls)`],
      ['period jobs idle after', `${idleS.toFixed(2)} s`],
      ['periods queued', `${progress.total} (expected ${expTotal})`],
      [
        'stored / empty / skipped / pending',
        `${progress.stored} / ${progress.empty} / ${progress.skipped} / ${progress.pending}`,
      ],
      [
        'weeklies stored',
        `${stored('WEEK')} of ${expWeeks.due} (expected ${expWeeks.stored}: weeks with a conversation)`,
      ],
      ['monthlies stored', `${stored('MONTH')} of ${expMonths.due} (expected ${expMonths.stored})`],
      ['yearlies stored', `${stored('YEAR')} of ${expYears.due} (expected ${expYears.stored})`],
      ['empty periods', `${progress.empty} (expected ${expTotal - expStored})`],
      ['periods per second', (progress.total / doneS).toFixed(1)],
      [
        'model calls (summarizePeriod)',
        `${calls.n} (${calls.failed} failed, ${(calls.ms / 1000).toFixed(2)} s in the model)`,
      ],
      ...(fakeCalls !== null
        ? ([['fake server summarizePeriod requests', String(fakeCalls)]] as [string, string][])
        : []),
      ['period jobs', `${jobs.n} (${jobs.retried} retried, ${jobs.failed} failed)`],
    ];
    const width = Math.max(...rows.map(([k]) => k.length));
    const llm = opts.llm === 'fake' ? 'fake OpenAI-compatible server' : 'local heuristics';
    const embedder = opts.embeddings === 'fake' ? 'fake server (hashed words)' : 'local USE-lite';
    const example = [
      '',
      month
        ? `latest month, ${month.start} to ${month.end} (${month.conversationCount} conversations, ${month.turnCount} turns):`
        : 'no month summary stored',
      ...(month
        ? [
            `  ${month.summary}`,
            `  keyThemes: ${month.keyThemes.join(', ')}`,
            `  emotionalTone: ${month.emotionalTone ?? '(none)'}`,
            `  recurringPatterns: ${month.recurringPatterns.join('; ')}`,
            `  people: ${month.people.join(', ')}; places: ${month.places.join(', ')}`,
          ]
        : []),
      year
        ? `year ${year.start} to ${year.end}, first 300 characters:\n  ${year.summary.slice(0, 300)}`
        : 'no year summary stored',
    ];
    console.log(
      [
        `Keepsake period summaries benchmark: ${opts.years} years, ${opts.perWeek} conversations a week, ` +
          `threshold ${THRESHOLD}, batch ${BATCH}, LLM = ${llm}, embeddings = ${embedder}`,
        `node ${process.version}, ${process.platform}/${process.arch}, ` +
          (server
            ? `PostgreSQL server, ${config.env.JOBS_CONCURRENCY} jobs at once`
            : 'embedded PGlite, one job at a time') +
          `, jobs poll every ${config.env.JOBS_POLL_MS} ms`,
        '',
        ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`),
        ...example,
      ].join('\n'),
    );
    if (
      !progress.done ||
      progress.pending !== 0 ||
      periodJobsBusy > 0 ||
      progress.stored + progress.empty !== progress.total ||
      progress.skipped !== 0 ||
      progress.total !== expTotal ||
      rowsStored !== progress.stored ||
      stored('WEEK') !== expWeeks.stored ||
      stored('MONTH') !== expMonths.stored ||
      stored('YEAR') !== expYears.stored ||
      jobs.failed > 0 ||
      calls.failed > 0 ||
      (fakeCalls !== null && opts.llm === 'fake' && fakeCalls !== calls.n)
    ) {
      process.exitCode = 1;
    }
  } finally {
    await app.close();
    await fake?.close();
    rmSync(dataDir, { recursive: true, force: true });
    if (server && !opts.keep) await server.drop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
