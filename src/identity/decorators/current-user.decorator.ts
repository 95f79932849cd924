import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { GqlExecutionContext } from '@nestjs/graphql';
import type { RequestContext } from '../../graphql/request-context.js';
import type { UserEntity } from '../user.entity.js';

/** The authenticated user; only valid behind GqlAuthGuard. */
export const CurrentUser = createParamDecorator(
  (_data: unknown, context: ExecutionContext): UserEntity => {
    const user = GqlExecutionContext.create(context).getContext<RequestContext>().user;
    if (!user) throw new Error('CurrentUser used without GqlAuthGuard');
    return user;
  },
);
