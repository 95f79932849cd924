import type { NextFunction, Request, Response } from 'express';
import { checkSource } from './query-limits.plugin.js';

/**
 * GraphQL over HTTP: a document too deeply nested, or with too many fragments, is refused before
 * Apollo parses it (its parser and validation recurse; Apollo reports a failure there as an
 * internal error or a stack overflow). graphql-ws runs the same check in onSubscribe.
 */
export function refuseOversizedDocuments(req: Request, res: Response, next: NextFunction): void {
  const body: unknown = req.body;
  const queries = [
    ...(Array.isArray(body) ? body : [body]).map((b) => (b as { query?: unknown } | null)?.query),
    (req.query as Record<string, unknown> | undefined)?.query,
  ];
  for (const query of queries) {
    if (typeof query !== 'string') continue;
    const refused = checkSource(query);
    if (!refused) continue;
    res.status(400).json({
      errors: [
        {
          message: refused.message,
          extensions: {
            code: refused.extensions.code,
            reason: refused.extensions.reason,
            field: refused.extensions.field,
          },
        },
      ],
    });
    return;
  }
  next();
}
