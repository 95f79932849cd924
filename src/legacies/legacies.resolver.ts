import { UseGuards } from '@nestjs/common';
import { Args, ID, Mutation, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { ForwardPageArgs } from '../common/pagination/connection.js';
import { UuidPipe } from '../common/validation/uuid.pipe.js';
import { Loaders } from '../graphql/loaders.js';
import { RequestLoaders } from '../graphql/request-loaders.decorator.js';
import { CurrentUser } from '../identity/decorators/current-user.decorator.js';
import { GqlAuthGuard } from '../identity/guards/gql-auth.guard.js';
import { UserModel } from '../identity/models/user.model.js';
import { UserEntity } from '../identity/user.entity.js';
import { UsersService } from '../identity/users.service.js';
import {
  AddLegacyMemberInput,
  CreateLegacyInput,
  RemoveLegacyMemberInput,
  SetLegacyMemberRoleInput,
  UpdateLegacyInput,
} from './dto/legacy.inputs.js';
import { LegaciesService } from './legacies.service.js';
import { LegacyRole } from './legacy-role.enum.js';
import { LegacyEntity } from './legacy.entity.js';
import {
  AddLegacyMemberPayload,
  LegacyConnection,
  LegacyInvitationModel,
  LegacyMemberModel,
  LegacyModel,
  ReceivedInvitationModel,
} from './models/legacy.model.js';
import { USER_BY_ID } from '../identity/user.loaders.js';
import { LEGACY_MEMBERS } from './legacy.loaders.js';

function toModel({ legacy, role }: { legacy: LegacyEntity; role: LegacyRole }): LegacyModel {
  return { ...legacy, viewerRole: role };
}

@Resolver(() => LegacyModel)
@UseGuards(GqlAuthGuard)
export class LegaciesResolver {
  constructor(private readonly service: LegaciesService) {}

  @Query(() => LegacyConnection, { description: "The viewer's legacies, oldest membership first." })
  async legacies(@CurrentUser() user: UserEntity, @Args() page: ForwardPageArgs) {
    const connection = await this.service.list(user, page);
    return {
      ...connection,
      nodes: connection.nodes.map(toModel),
      edges: connection.edges.map((e) => ({ cursor: e.cursor, node: toModel(e.node) })),
    };
  }

  @Query(() => LegacyModel)
  async legacy(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ) {
    return toModel(await this.service.get(user, id));
  }

  @Mutation(() => LegacyModel)
  async createLegacy(@CurrentUser() user: UserEntity, @Args('input') input: CreateLegacyInput) {
    return toModel(
      await this.service.create(user, {
        ...input,
        name: LegaciesService.validateName(input.name),
      }),
    );
  }

  @Mutation(() => LegacyModel, { description: 'Owners and admins.' })
  async updateLegacy(@CurrentUser() user: UserEntity, @Args('input') input: UpdateLegacyInput) {
    const { id, persona, name, ...rest } = input;
    return toModel(
      await this.service.update(user, id, {
        ...rest,
        ...(name !== undefined ? { name: LegaciesService.validateName(name) } : {}),
        ...(persona !== undefined ? { persona: persona.trim() === '' ? null : persona } : {}),
      }),
    );
  }

  @Mutation(() => Boolean, { description: 'Owners only. Removes everything under the legacy.' })
  async deleteLegacy(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ) {
    await this.service.delete(user, id);
    return true;
  }

  @Mutation(() => AddLegacyMemberPayload, {
    description:
      'Invites the email (owners and admins). The invitee joins only by accepting it; the answer is the same whether or not the email has an account.',
  })
  addLegacyMember(@CurrentUser() user: UserEntity, @Args('input') input: AddLegacyMemberInput) {
    return this.service.addMember(user, input.legacyId, input.email, input.role);
  }

  @Query(() => [ReceivedInvitationModel], {
    description:
      'Invitations to your verified email that you can still accept or decline, newest first (at most 100).',
  })
  myInvitations(@CurrentUser() user: UserEntity) {
    return this.service.myInvitations(user);
  }

  @Mutation(() => LegacyModel, { description: 'Join the legacy an invitation to you is for.' })
  async acceptInvitation(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ) {
    return toModel(await this.service.acceptInvitation(user, id));
  }

  @Mutation(() => Boolean, { description: 'Turn down an invitation to you.' })
  async declineInvitation(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ) {
    await this.service.declineInvitation(user, id);
    return true;
  }

  @Mutation(() => Boolean)
  async cancelLegacyInvitation(
    @CurrentUser() user: UserEntity,
    @Args('legacyId', { type: () => ID }, UuidPipe) legacyId: string,
    @Args('email') email: string,
  ) {
    await this.service.cancelInvitation(user, legacyId, email);
    return true;
  }

  @Mutation(() => LegacyMemberModel)
  setLegacyMemberRole(
    @CurrentUser() user: UserEntity,
    @Args('input') input: SetLegacyMemberRoleInput,
  ) {
    return this.service.setRole(user, input.legacyId, input.userId, input.role);
  }

  @Mutation(() => Boolean)
  async removeLegacyMember(
    @CurrentUser() user: UserEntity,
    @Args('input') input: RemoveLegacyMemberInput,
  ) {
    await this.service.removeMember(user, input.legacyId, input.userId);
    return true;
  }

  @Mutation(() => Boolean, { description: 'Leave a legacy. The last owner cannot leave.' })
  async leaveLegacy(
    @CurrentUser() user: UserEntity,
    @Args('legacyId', { type: () => ID }, UuidPipe) legacyId: string,
  ) {
    await this.service.leave(user, legacyId);
    return true;
  }

  @ResolveField(() => [LegacyMemberModel])
  members(@Parent() legacy: LegacyModel, @RequestLoaders() loaders: Loaders) {
    return loaders.get(LEGACY_MEMBERS, this.service).load(legacy.id);
  }

  @ResolveField(() => [LegacyInvitationModel], {
    nullable: true,
    description:
      'Pending invitations; owners and admins only (null, with a FORBIDDEN error, for others).',
  })
  invitations(@CurrentUser() user: UserEntity, @Parent() legacy: LegacyModel) {
    return this.service.pendingInvitations(user, legacy.id);
  }
}

@Resolver(() => LegacyMemberModel)
@UseGuards(GqlAuthGuard)
export class LegacyMemberResolver {
  constructor(private readonly users: UsersService) {}

  @ResolveField(() => UserModel)
  async user(@Parent() member: LegacyMemberModel, @RequestLoaders() loaders: Loaders) {
    return loaders.get(USER_BY_ID, this.users).load(member.userId);
  }
}
