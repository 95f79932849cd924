import type { NextFunction, Request, Response } from 'express';
import type { GraphQLError } from 'graphql';
import { checkSource, checkVariables } from './query-limits.plugin.js';

/** A GET request's variables arrive as JSON text in the URL. */
function parsed(variables: unknown): unknown {
  if (typeof variables !== 'string') return variables;
  try {
    return JSON.parse(variables);
  } catch {
    return null; // Apollo reports it.
  }
}

/**
 * GraphQL over HTTP: a document too deeply nested, or with too many fragments, and variables
 * nested too deep, are refused before Apollo reads them (its parser and validation, and the
 * inputs' validation, recurse: a failure there is a stack overflow reported as an internal
 * error). graphql-ws runs the same checks in onSubscribe.
 */
export function refuseOversizedDocuments(req: Request, res: Response, next: NextFunction): void {
  const body: unknown = req.body;
  const requests = [
    ...(Array.isArray(body) ? body : [body]).map(
      (b) => (b ?? {}) as { query?: unknown; variables?: unknown },
    ),
    (req.query ?? {}) as { query?: unknown; variables?: unknown },
  ];
  for (const request of requests) {
    const refused: GraphQLError | null =
      (typeof request.query === 'string' ? checkSource(request.query) : null) ??
      checkVariables(parsed(request.variables));
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
