import { setup } from '../support/global-setup.mjs';

// The fault suite starts every database empty: no template to make.
export default async function globalSetup(_globalConfig, project) {
  await setup(project, { templates: false });
}
