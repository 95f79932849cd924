import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { GqlExecutionContext } from '@nestjs/graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { Loaders } from './loaders.js';
import type { RequestContext } from './request-context.js';

/**
 * The loaders of this request. A subscription's context lives as long as the subscription, so
 * there each event (its root value) gets loaders of its own: no event sees rows cached for an
 * earlier one.
 */
export const RequestLoaders = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Loaders => {
    const gql = GqlExecutionContext.create(context);
    const ctx = gql.getContext<RequestContext>();
    const root: unknown = gql.getInfo<GraphQLResolveInfo>().rootValue;
    if (ctx.transport !== 'ws' || root === null || typeof root !== 'object') return ctx.loaders;
    ctx.eventLoaders ??= new WeakMap();
    let loaders = ctx.eventLoaders.get(root);
    if (!loaders) {
      loaders = new Loaders();
      ctx.eventLoaders.set(root, loaders);
    }
    return loaders;
  },
);
