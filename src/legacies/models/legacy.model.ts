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

@ObjectType('LegacyInvitation', {
  description:
    'Membership offered to whoever holds this email; they join only by accepting it before it expires.',
})
export class LegacyInvitationModel {
  @Field(() => ID)
  id: string;

  @Field()
  email: string;

  @Field(() => LegacyRole)
  role: LegacyRole;

  @Field()
  createdAt: Date;

  @Field({ description: 'After this it can no longer be accepted (INVITATION_TTL).' })
  expiresAt: Date;
}

@ObjectType('ReceivedInvitation', {
  description: 'An invitation to join a legacy, as the invitee sees it.',
})
export class ReceivedInvitationModel {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  legacyId: string;

  @Field()
  legacyName: string;

  @Field(() => LegacyRole, { description: 'The role accepting gives.' })
  role: LegacyRole;

  @Field(() => String, { nullable: true, description: "The inviter's display name." })
  invitedByName: string | null;

  @Field()
  createdAt: Date;

  @Field()
  expiresAt: Date;
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
  @Field(() => LegacyMemberModel, {
    nullable: true,
    deprecationReason:
      'Always null: everyone joins by accepting the invitation (acceptInvitation), so the answer does not tell whether the email has an account.',
  })
  member: null;

  @Field(() => LegacyInvitationModel, {
    description:
      'The invitation, the same whether or not the email has an account; the invitee sees it in myInvitations.',
  })
  invitation: LegacyInvitationModel;
}
