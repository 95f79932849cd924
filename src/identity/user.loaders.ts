import { byKey, defineLoader } from '../graphql/loaders.js';
import type { UserEntity } from './user.entity.js';
import type { UsersService } from './users.service.js';

/** Users by id (authors, members), for any resolver that shows who someone is. */
export const USER_BY_ID = defineLoader<string, UserEntity | null, UsersService>(
  'user.byId',
  (users) => async (ids) => byKey(ids, await users.findByIds(ids), (u) => u.id),
);
