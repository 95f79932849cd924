import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { ApolloDriver, ApolloDriverConfig } from '@nestjs/apollo';
import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { GraphQLModule } from '@nestjs/graphql';
import { AgentModule } from './agent/agent.module.js';
import { AuditModule } from './audit/audit.module.js';
import { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { ConsoleModule } from './console/console.module.js';
import { ContextQueriesModule } from './context/context-queries.module.js';
import { ContextModule } from './context/context.module.js';
import { ConversationsModule } from './conversations/conversations.module.js';
import { DatabaseModule } from './database/database.module.js';
import { EmbeddingsModule } from './embeddings/embeddings.module.js';
import { FactsModule } from './facts/facts.module.js';
import { GraphqlExceptionFilter } from './graphql/graphql-exception.filter.js';
import { graphqlOptions } from './graphql/graphql-options.js';
import { StorageGuard } from './database/storage-guard.service.js';
import { EventBus } from './pubsub/event-bus.js';
import { HealthModule } from './health/health.module.js';
import { BackupsModule } from './backups/backups.module.js';
import { IdentityModule } from './identity/identity.module.js';
import { RequestAuthenticator } from './identity/request-authenticator.js';
import { JobsModule } from './jobs/jobs.module.js';
import { LegaciesModule } from './legacies/legacies.module.js';
import { MemoriesModule } from './memories/memories.module.js';
import { LlmModule } from './llm/llm.module.js';
import { PubSubModule } from './pubsub/pubsub.module.js';
import { SearchModule } from './search/search.module.js';
import { SummariesModule } from './summaries/summaries.module.js';
import { PeriodsModule } from './periods/periods.module.js';
import { StoriesModule } from './stories/stories.module.js';
import { SignalsModule } from './signals/signals.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { ServiceMetrics } from './metrics/service-metrics.js';
import { ProfilesModule } from './profiles/profiles.module.js';
import { ArchivesModule } from './archives/archives.module.js';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    // Made here, before the container, because the GraphQL options count into it too.
    const metrics = new ServiceMetrics({
      defaultMetrics: config.env.METRICS_ENABLED,
      databaseRefreshMs: config.env.METRICS_DB_REFRESH_MS,
    });
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        MetricsModule.forRoot(metrics),
        DatabaseModule,
        PubSubModule,
        IdentityModule,
        RateLimitModule,
        JobsModule,
        LlmModule,
        EmbeddingsModule,
        HealthModule,
        BackupsModule,
        LegaciesModule,
        ConversationsModule,
        ContextModule,
        AgentModule,
        MemoriesModule,
        FactsModule,
        SummariesModule,
        PeriodsModule,
        StoriesModule,
        ProfilesModule,
        ArchivesModule,
        SearchModule,
        ContextQueriesModule,
        AuditModule,
        SignalsModule,
        ConsoleModule,
        GraphQLModule.forRootAsync<ApolloDriverConfig>({
          driver: ApolloDriver,
          // The authenticator counts operations no resolver's guard sees (meta fields only).
          inject: [RequestAuthenticator, StorageGuard, EventBus],
          useFactory: (authenticator: RequestAuthenticator, storage: StorageGuard, bus: EventBus) =>
            graphqlOptions(config, metrics, authenticator, storage, bus),
        }),
      ],
      providers: [{ provide: APP_FILTER, useClass: GraphqlExceptionFilter }],
    };
  }
}
