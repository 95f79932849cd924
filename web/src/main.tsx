import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app';
import { loadSettings } from './lib/settings';
import './styles.css';

const root = createRoot(document.getElementById('root')!);

loadSettings().then(
  (settings) =>
    root.render(
      <StrictMode>
        <App settings={settings} />
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
