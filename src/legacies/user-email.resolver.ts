import { Parent, ResolveField, Resolver } from '@nestjs/graphql';
import { Loaders } from '../graphql/loaders.js';
import { RequestLoaders } from '../graphql/request-loaders.decorator.js';
import { CurrentUser } from '../identity/decorators/current-user.decorator.js';
import { UserModel } from '../identity/models/user.model.js';
import type { UserEntity } from '../identity/user.entity.js';
import { LegaciesService } from './legacies.service.js';
import { EMAIL_VISIBLE } from './legacy.loaders.js';

/**
 * Whose email a User shows, wherever one appears (members, authors): the rule is the legacies
 * module's, since it follows from roles (LegaciesService.emailsVisibleTo).
 */
@Resolver(() => UserModel)
export class UserEmailResolver {
  constructor(private readonly legacies: LegaciesService) {}

  @ResolveField(() => String, { nullable: true })
  async email(
    @Parent() user: UserModel,
    @CurrentUser() viewer: UserEntity,
    @RequestLoaders() loaders: Loaders,
  ): Promise<string | null> {
    if (!user.email) return null;
    const visible = await loaders
      .get(EMAIL_VISIBLE, { legacies: this.legacies, viewerId: viewer.id })
      .load(user.id);
    return visible ? user.email : null;
  }
}
