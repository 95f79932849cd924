import { generatedDocuments, inlineDocuments } from '../../web/inline-documents.js';

describe('inlineDocuments (the console build: each page carries its own GraphQL documents)', () => {
  it('replaces each graphql() call with its generated document, imported from a module of its own', () => {
    const code = [
      "import { graphql } from '../gql';",
      'const List = graphql(`',
      '  query StoryList($legacyId: ID!) {',
      '    stories(legacyId: $legacyId) { nodes { id } }',
      '  }',
      '`);',
      'export const Fields = graphql(`\n  fragment StoryFields on Story { id title }\n`);',
      'const Changed = graphql(`subscription StoryChanged { storyChanged(legacyId: "x") { storyId } }`);',
      'const Again = graphql(`\n  query StoryList($legacyId: ID!) { x }\n`);',
    ].join('\n');
    expect(inlineDocuments(code)).toBe(
      [
        "import { StoryListDocument } from 'virtual:keepsake-document/StoryListDocument';",
        "import { StoryFieldsFragmentDoc } from 'virtual:keepsake-document/StoryFieldsFragmentDoc';",
        "import { StoryChangedDocument } from 'virtual:keepsake-document/StoryChangedDocument';",
        "import { graphql } from '../gql';",
        'const List = StoryListDocument;',
        'export const Fields = StoryFieldsFragmentDoc;',
        'const Changed = StoryChangedDocument;',
        'const Again = StoryListDocument;',
      ].join('\n'),
    );
  });

  it('leaves a module without a document alone', () => {
    expect(inlineDocuments("export const graphqlPath = '/graphql';")).toBeNull();
  });

  it('reads each document of the generated module by its name', () => {
    const generated = [
      'export type X = { a: string };',
      'export const MeDocument = {"kind":"Document","definitions":[]} as unknown as DocumentNode<MeQuery, MeQueryVariables>;',
      'export const MeFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition"}]} as unknown as DocumentNode<MeFieldsFragment, unknown>;',
    ].join('\n');
    expect(Object.fromEntries(generatedDocuments(generated))).toEqual({
      MeDocument: '{"kind":"Document","definitions":[]}',
      MeFieldsFragmentDoc: '{"kind":"Document","definitions":[{"kind":"FragmentDefinition"}]}',
    });
  });
});
