import { UseGuards } from '@nestjs/common';
import { Args, ID, Mutation, Query, Resolver } from '@nestjs/graphql';
import { CurrentUser } from '../identity/decorators/current-user.decorator.js';
import { GqlAuthGuard } from '../identity/guards/gql-auth.guard.js';
import { UserEntity } from '../identity/user.entity.js';
import { RecallArgs } from './dto/recall.args.js';
import { ForgetRecallItemPayload, RecallConnectionModel } from './models/recall.model.js';
import { SearchService } from './search.service.js';

@Resolver()
@UseGuards(GqlAuthGuard)
export class SearchResolver {
  constructor(private readonly search: SearchService) {}

  @Query(() => RecallConnectionModel, {
    description:
      'What Keepsake remembers about something, across your memories, the facts you may see, and your conversations about the legacy, best first: each edge holds the item and how well it answers this question.',
  })
  recall(@CurrentUser() user: UserEntity, @Args() args: RecallArgs) {
    return this.search.recallPage(user, args.legacyId, args.query, args.first, args.after);
  }

  @Mutation(() => ForgetRecallItemPayload, {
    description:
      'Forgets a recall result by its id: your memory (restorable for a while), a fact you wrote, your period summary, an entry of your profile (`profile:<field>`, cleared now), or (with confirm: true) your story a passage came from. Summaries and turns cannot be forgotten one by one.',
  })
  forgetRecallItem(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }) id: string,
    @Args('confirm', {
      type: () => Boolean,
      nullable: true,
      description: 'Needed to delete a whole story from one of its passages.',
    })
    confirm: boolean | null,
  ) {
    return this.search.forget(user, id, confirm === true);
  }
}
