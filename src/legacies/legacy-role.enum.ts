import { registerEnumType } from '@nestjs/graphql';

export enum LegacyRole {
  OWNER = 'OWNER',
  ADMIN = 'ADMIN',
  MEMBER = 'MEMBER',
}

registerEnumType(LegacyRole, { name: 'LegacyRole' });
