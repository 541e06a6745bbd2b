// Preloaded into the CLI by the executor bench (`node --import`): records the
// event loop's delay (perf_hooks monitorEventLoopDelay, 5 ms resolution) for
// the whole run and writes p99 and max in ms to $KUBEMIX_BENCH_LOOP at exit.
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const histogram = monitorEventLoopDelay({ resolution: 5 });
histogram.enable();
process.on('exit', () => {
  const file = process.env['KUBEMIX_BENCH_LOOP'];
  if (file === undefined) return;
  writeFileSync(file, JSON.stringify({ p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6 }));
});
