import { Type } from '@nestjs/common';
import { ArgsType, Field, Int, ObjectType } from '@nestjs/graphql';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { CommonErrorCode, CommonException } from '../errors/domain.exception.js';

@ObjectType()
export class PageInfo {
  @Field()
  hasNextPage: boolean;

  @Field()
  hasPreviousPage: boolean;

  @Field(() => String, { nullable: true })
  startCursor: string | null;

  @Field(() => String, { nullable: true })
  endCursor: string | null;
}

/** Forward-only paging: `first` and `after`. */
@ArgsType()
export class ForwardPageArgs {
  @Field(() => Int, {
    nullable: true,
    description: 'Page size (default 20, at most MAX_PAGE_SIZE).',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(10_000)
  first?: number;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @IsString()
  after?: string;
}

/** Both directions: `first`/`after` or `last`/`before`. */
@ArgsType()
export class PageArgs extends ForwardPageArgs {
  @Field(() => Int, { nullable: true })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(10_000)
  last?: number;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @IsString()
  before?: string;
}

export interface Edge<T> {
  cursor: string;
  node: T;
}

export interface Connection<T> {
  edges: Edge<T>[];
  nodes: T[];
  pageInfo: PageInfo;
  totalCount?: number;
}

/** Builds `XConnection` and `XEdge` object types for a node type. */
export function ConnectionType<T>(nodeType: Type<T>, name = nodeType.name): Type<Connection<T>> {
  @ObjectType(`${name}Edge`)
  class EdgeType {
    @Field()
    cursor: string;

    @Field(() => nodeType)
    node: T;
  }

  @ObjectType(`${name}Connection`, { isAbstract: true })
  abstract class ConnectionClass {
    @Field(() => [EdgeType], { description: 'The page, in order: read each `node`.' })
    edges: EdgeType[];

    @Field(() => [nodeType], {
      deprecationReason:
        'Read edges { node }: Relay-style pagination helpers (Apollo Client, urql Graphcache, Relay) merge the edges of the pages they fetch, not nodes, so a list read from nodes shows only the last page.',
    })
    nodes: T[];

    @Field(() => PageInfo)
    pageInfo: PageInfo;
  }
  return ConnectionClass as unknown as Type<Connection<T>>;
}

/** Opaque cursors: base64url JSON of the sort key values. */
export function encodeCursor(values: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

export function decodeCursor(cursor: string, field: string, arity: number): (string | number)[] {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(parsed) &&
      parsed.length === arity &&
      parsed.every((v) => typeof v === 'string' || typeof v === 'number')
    ) {
      return parsed as (string | number)[];
    }
  } catch {
    // fall through to the error below
  }
  throw new CommonException(CommonErrorCode.INVALID_CURSOR, 'The cursor is not valid.', field);
}

export interface PageRequest {
  limit: number;
  direction: 'forward' | 'backward';
  cursor?: string;
}

/** Validates paging arguments against the configured maximum. */
export function pageRequest(
  args: { first?: number; after?: string; last?: number; before?: string },
  maxPageSize: number,
  defaultSize = 20,
): PageRequest {
  if (args.first != null && args.last != null) {
    throw CommonException.invalid('last', 'Use either first/after or last/before, not both.');
  }
  const size = args.last ?? args.first ?? defaultSize;
  const field = args.last != null ? 'last' : 'first';
  if (size > maxPageSize) {
    throw new CommonException(
      CommonErrorCode.PAGE_TOO_LARGE,
      `At most ${maxPageSize} items can be requested at once.`,
      field,
    );
  }
  if (args.last != null || args.before != null) {
    return { limit: size, direction: 'backward', cursor: args.before };
  }
  return { limit: size, direction: 'forward', cursor: args.after };
}

/**
 * Turns `limit + 1` rows fetched in the page's direction into a connection.
 * Rows must already be in the order of the request's direction.
 */
export function toConnection<T>(
  rows: T[],
  request: PageRequest,
  cursorOf: (row: T) => string,
): Connection<T> {
  const hasMore = rows.length > request.limit;
  const page = rows.slice(0, request.limit);
  if (request.direction === 'backward') page.reverse();
  const edges = page.map((node) => ({ node, cursor: cursorOf(node) }));
  return {
    edges,
    nodes: page,
    pageInfo: {
      hasNextPage: request.direction === 'forward' ? hasMore : request.cursor != null,
      hasPreviousPage: request.direction === 'backward' ? hasMore : request.cursor != null,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
  };
}
