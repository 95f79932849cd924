import { Field, ID, ObjectType } from '@nestjs/graphql';

/** What other members see of a user. */
@ObjectType('User')
export class UserModel {
  @Field(() => ID)
  id: string;

  @Field(() => String, { nullable: true })
  displayName: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'Their verified email: shown to themselves and to the owners and admins of a legacy they belong to (who manage membership by email); null for anyone else.',
  })
  email: string | null;
}

/** The signed-in user, with their own settings. */
@ObjectType('Me')
export class MeModel extends UserModel {
  @Field()
  timezone: string;

  @Field({
    description:
      'Whether new conversations remember things about you by default (off until you turn it on).',
  })
  rememberByDefault: boolean;

  @Field({
    description:
      'Memory paused: nothing new is remembered and no memory is used in replies (rememberThis still works).',
  })
  memoryPaused: boolean;

  @Field({
    description:
      'Long-term memory: memories older than two years are kept active even when not referenced for six months.',
  })
  longTermMemory: boolean;

  @Field()
  isPlatformAdmin: boolean;

  @Field()
  createdAt: Date;
}
