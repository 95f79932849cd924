import { useEffect, useRef } from 'react';
import type { ChartConfiguration } from 'chart.js';

/**
 * A Chart.js chart, loaded with the library when first drawn (the pages that plot pull it in;
 * the others never do). The canvas is an image named by `label`; a page gives the same numbers
 * as text next to it for those who cannot see it. `config` must be stable (useMemo).
 */
export function ChartCanvas({
  label,
  config,
  height = 280,
}: {
  label: string;
  config: ChartConfiguration;
  height?: number;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    let chart: { destroy(): void } | null = null;
    let gone = false;
    void import('../lib/charts').then(({ Chart }) => {
      if (gone || !canvas.current) return;
      chart = new Chart(canvas.current, {
        ...config,
        options: {
          responsive: true,
          maintainAspectRatio: false,
          animation: false,
          ...config.options,
        },
      });
    });
    return () => {
      gone = true;
      chart?.destroy();
    };
  }, [config]);
  return (
    <div className="chart" style={{ height }}>
      <canvas ref={canvas} role="img" aria-label={label} data-testid="chart" />
    </div>
  );
}
