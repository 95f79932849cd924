import { Field, GraphQLISODateTime, ID, ObjectType } from '@nestjs/graphql';

@ObjectType('ProfileRelationship', { description: 'Your relationship to one legacy.' })
export class ProfileRelationshipModel {
  @Field(() => ID)
  legacyId: string;

  @Field()
  legacyName: string;

  @Field()
  relationship: string;
}

@ObjectType('Profile', {
  description:
    'Your own profile: only you can read or change it. It is read into your conversations and recall only while consent is on; turning consent off deletes its content.',
})
export class ProfileModel {
  @Field({
    description:
      'Whether Keepsake may use your profile in your conversations and recall. Off until you turn it on.',
  })
  consent: boolean;

  @Field(() => GraphQLISODateTime, { nullable: true })
  consentChangedAt: Date | null;

  @Field(() => String, { nullable: true })
  preferredName: string | null;

  @Field(() => String, { nullable: true })
  pronouns: string | null;

  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD.' })
  birthday: string | null;

  @Field(() => String, { nullable: true })
  homeTown: string | null;

  @Field(() => [ProfileRelationshipModel], {
    description: 'To legacies you are a member of; each is used only in that legacy.',
  })
  relationships: ProfileRelationshipModel[];

  @Field(() => [String])
  languages: string[];

  @Field(() => [String])
  interests: string[];

  @Field(() => String, {
    nullable: true,
    description: 'What you want from the conversations.',
  })
  conversationGoals: string | null;

  @Field(() => String, { nullable: true })
  notes: string | null;

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'Null before any change.' })
  updatedAt: Date | null;
}
