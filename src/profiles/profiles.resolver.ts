import { UseGuards } from '@nestjs/common';
import { Args, Mutation, Query, Resolver } from '@nestjs/graphql';
import { CurrentUser } from '../identity/decorators/current-user.decorator.js';
import { GqlAuthGuard } from '../identity/guards/gql-auth.guard.js';
import { UserEntity } from '../identity/user.entity.js';
import { UpdateProfileInput } from './dto/profile.inputs.js';
import { ProfileModel } from './models/profile.model.js';
import { ProfilesService } from './profiles.service.js';

/** The caller's own profile: there is no way to name anyone else's. */
@Resolver(() => ProfileModel)
@UseGuards(GqlAuthGuard)
export class ProfilesResolver {
  constructor(private readonly profiles: ProfilesService) {}

  @Query(() => ProfileModel, { description: 'Your own profile (empty until you fill it in).' })
  profile(@CurrentUser() user: UserEntity) {
    return this.profiles.get(user);
  }

  @Mutation(() => ProfileModel, {
    description:
      'Changes your profile: fields left out stay, null or blank clears. Stored whether or not consent is on; used in conversations and recall, and embedded, only while it is on.',
  })
  updateProfile(@CurrentUser() user: UserEntity, @Args('input') input: UpdateProfileInput) {
    return this.profiles.update(user, input);
  }

  @Mutation(() => ProfileModel, {
    description:
      'Turns the use of your profile on or off. Off deletes its content and vectors at once, for good.',
  })
  setProfileConsent(
    @CurrentUser() user: UserEntity,
    @Args('consent', { type: () => Boolean }) consent: boolean,
  ) {
    return this.profiles.setConsent(user, consent);
  }
}
