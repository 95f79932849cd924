import { UseGuards } from '@nestjs/common';
import { Args, Context, ID, Mutation, Query, Resolver, Subscription } from '@nestjs/graphql';
import { UuidPipe } from '../common/validation/uuid.pipe.js';
import type { RequestContext } from '../graphql/request-context.js';
import { unlessEnded } from '../graphql/session-bound.js';
import { CurrentUser } from '../identity/decorators/current-user.decorator.js';
import { GqlAuthGuard } from '../identity/guards/gql-auth.guard.js';
import { UserEntity } from '../identity/user.entity.js';
import type { LegacyArchiveEntity } from './archive.entity.js';
import { toArchiveModel } from './archive.mapper.js';
import { ArchivesService } from './archives.service.js';
import { LegacyArchivesArgs } from './dto/archive.inputs.js';
import { LegacyArchiveConnection, LegacyArchiveModel } from './models/legacy-archive.model.js';

@Resolver(() => LegacyArchiveModel)
@UseGuards(GqlAuthGuard)
export class ArchivesResolver {
  constructor(private readonly service: ArchivesService) {}

  @Mutation(() => LegacyArchiveModel, {
    description:
      'Starts writing your archive of a legacy: a ZIP with what you may see of it (its description, the facts you may see, the stories with their original files, your conversations, memories and period summaries), readable without Keepsake (index.html) and by machines (keepsake.json). Follow it with legacyArchiveProgress; download it from its downloadUrl. One already on its way is answered instead.',
  })
  async exportLegacyArchive(
    @CurrentUser() user: UserEntity,
    @Args('legacyId', { type: () => ID }, UuidPipe) legacyId: string,
  ): Promise<LegacyArchiveModel> {
    return toArchiveModel(await this.service.requestExport(user, legacyId));
  }

  @Mutation(() => LegacyArchiveModel, {
    description:
      'Imports an archive you uploaded (POST /archives, multipart, field "file") as a new legacy you own. Follow it with legacyArchiveProgress; its legacyId is the new legacy.',
  })
  async importLegacyArchive(
    @CurrentUser() user: UserEntity,
    @Args(
      'id',
      { type: () => ID, description: 'The uploaded archive (its id from POST /archives).' },
      UuidPipe,
    )
    id: string,
  ): Promise<LegacyArchiveModel> {
    return toArchiveModel(await this.service.requestImport(user, id));
  }

  @Query(() => LegacyArchiveModel, { description: 'One of your archives.' })
  async legacyArchive(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ): Promise<LegacyArchiveModel> {
    return toArchiveModel(await this.service.get(user, id));
  }

  @Query(() => LegacyArchiveConnection, {
    description:
      'Your archives, newest first: exports (of legacies you are a member of) and imports.',
  })
  async legacyArchives(@CurrentUser() user: UserEntity, @Args() args: LegacyArchivesArgs) {
    const page = await this.service.list(user, { legacyId: args.legacyId, kind: args.kind }, args);
    return {
      ...page,
      nodes: page.nodes.map(toArchiveModel),
      edges: page.edges.map((e) => ({ cursor: e.cursor, node: toArchiveModel(e.node) })),
    };
  }

  @Subscription(() => LegacyArchiveModel, {
    description:
      'One of your exports or imports as it moves (stage, counts, status); it completes after the event that finishes it.',
    resolve: unlessEnded((archive: LegacyArchiveEntity) => toArchiveModel(archive)),
  })
  legacyArchiveProgress(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
    @Context() context: RequestContext,
  ) {
    return this.service.progress(user, id, context);
  }
}
