import { UseGuards } from '@nestjs/common';
import { Args, Mutation, Query, Resolver } from '@nestjs/graphql';
import { CurrentUser } from './decorators/current-user.decorator.js';
import { UpdateMeInput } from './dto/update-me.input.js';
import { GqlAuthGuard } from './guards/gql-auth.guard.js';
import { MeModel } from './models/user.model.js';
import { UserEntity } from './user.entity.js';
import { UsersService } from './users.service.js';

@Resolver(() => MeModel)
@UseGuards(GqlAuthGuard)
export class IdentityResolver {
  constructor(private readonly users: UsersService) {}

  @Query(() => MeModel, { description: 'The signed-in user.' })
  me(@CurrentUser() user: UserEntity): MeModel {
    return user;
  }

  @Mutation(() => MeModel)
  updateMe(@CurrentUser() user: UserEntity, @Args('input') input: UpdateMeInput): Promise<MeModel> {
    return this.users.updateMe(user, input);
  }
}
