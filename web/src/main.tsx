import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app';
import { loadSettings } from './lib/settings';
import './styles.css';

const root = createRoot(document.getElementById('root')!);

// oidc-client-ts is loaded only where a provider is configured: a development sign-in never
// downloads it.
loadSettings()
  .then(async (settings) => ({
    settings,
    oidc: settings.oidc ? await import('./lib/oidc') : null,
  }))
  .then(
    ({ settings, oidc }) =>
      root.render(
        <StrictMode>
          <App settings={settings} userManager={oidc?.userManager ?? null} />
        </StrictMode>,
      ),
    (err: unknown) =>
      root.render(
        <main className="page">
          <h1>Keepsake family console</h1>
          <p role="alert">{err instanceof Error ? err.message : String(err)}</p>
        </main>,
      ),
  );
