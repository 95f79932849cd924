import { Field, ID, ObjectType } from '@nestjs/graphql';
import { ConnectionType } from '../../common/pagination/connection.js';
import { UserModel } from '../../identity/models/user.model.js';
import { LegacyRole } from '../legacy-role.enum.js';

@ObjectType('LegacyMember')
export class LegacyMemberModel {
  legacyId: string;
  userId: string;

  @Field(() => UserModel)
  user?: UserModel;

  @Field(() => LegacyRole)
  role: LegacyRole;

  @Field()
  joinedAt: Date;
}

@ObjectType('LegacyInvitation', { description: 'Membership waiting for this email to sign in.' })
export class LegacyInvitationModel {
  @Field(() => ID)
  id: string;

  @Field()
  email: string;

  @Field(() => LegacyRole)
  role: LegacyRole;

  @Field()
  createdAt: Date;
}

@ObjectType('Legacy', { description: 'A person remembered by a family.' })
export class LegacyModel {
  @Field(() => ID)
  id: string;

  @Field()
  name: string;

  @Field(() => String, { nullable: true })
  description: string | null;

  @Field(() => String, { nullable: true, description: 'ISO date (YYYY-MM-DD).' })
  bornOn: string | null;

  @Field(() => String, { nullable: true, description: 'ISO date (YYYY-MM-DD).' })
  diedOn: string | null;

  @Field(() => String, {
    nullable: true,
    description: "The agent's system prompt for this legacy; null uses the default persona.",
  })
  persona: string | null;

  @Field(() => LegacyRole, { description: "The viewer's role in this legacy." })
  viewerRole: LegacyRole;

  @Field()
  createdAt: Date;

  @Field()
  updatedAt: Date;
}

@ObjectType()
export class LegacyConnection extends ConnectionType(LegacyModel, 'Legacy') {}

@ObjectType()
export class AddLegacyMemberPayload {
  @Field(() => LegacyMemberModel, { nullable: true, description: 'Set when the user existed.' })
  member: LegacyMemberModel | null;

  @Field(() => LegacyInvitationModel, {
    nullable: true,
    description: 'Set when no user has this email yet: it becomes a membership at first sign-in.',
  })
  invitation: LegacyInvitationModel | null;
}
