import { TestApp, TestUser } from './test-app.js';

/**
 * Makes `invitee` a member the only way there is: a manager invites their email and they accept.
 * Fails the test if either step is refused.
 */
export async function joinLegacy(
  t: TestApp,
  manager: TestUser,
  legacyId: string,
  invitee: TestUser,
  role: 'OWNER' | 'ADMIN' | 'MEMBER' = 'MEMBER',
): Promise<void> {
  if (!invitee.email) throw new Error('joinLegacy: the invitee needs an email claim');
  const invited = await t.gql<{ addLegacyMember: { invitation: { id: string } } }>(
    `mutation($input: AddLegacyMemberInput!) { addLegacyMember(input: $input) { invitation { id } } }`,
    { input: { legacyId, email: invitee.email, role } },
    manager,
  );
  if (invited.errors) throw new Error(`addLegacyMember: ${JSON.stringify(invited.errors)}`);
  const accepted = await t.gql(
    'mutation($id: ID!) { acceptInvitation(id: $id) { id } }',
    { id: invited.data!.addLegacyMember.invitation.id },
    invitee,
  );
  if (accepted.errors) throw new Error(`acceptInvitation: ${JSON.stringify(accepted.errors)}`);
}
