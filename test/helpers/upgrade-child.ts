// A process for the upgrade kill -9 test to kill: runs the upgrade plan of
// examples/k8s-libvirt-3-2-1.yaml (1.35 → 1.36) through the real executor
// (journal, secrets, scheduler) with the state directory given, against the
// recording target, and appends the id of every task whose apply returned
// to LOG (fsync'd), pausing a little after each so a kill lands mid-roll.
// Usage: node upgrade-child.js STATE_DIR LOG. Without arguments (node --test
// loads every file under test/) it does nothing.
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { applyPlan } from '../../src/exec/apply-plan.js';
import type { HostTransport } from '../../src/transport/types.js';
import { planSecretNames } from '../trace/fake-secrets.js';
import { RecordingTarget } from '../trace/recording-target.js';
import { StandInSource, examplePlan } from '../trace/run-trace.js';

const [stateDir, log] = process.argv.slice(2);
if (stateDir !== undefined && log !== undefined) await run(stateDir, log);

async function run(stateDir: string, log: string): Promise<void> {
  const { plan, contents } = examplePlan('k8s-libvirt-3-2-1', 'upgrade');
  const target = new RecordingTarget(plan, planSecretNames(plan, contents));
  const fd = openSync(log, 'a', 0o600);

  function recorded(host: string): HostTransport {
    const t = target.transportFor(host);
    return {
      ...t,
      exec: async (r) => {
        const result = await t.exec(r);
        const last = target.steps.at(-1);
        if (last?.kind === 'apply') {
          writeSync(fd, `${last.task}\n`);
          fsyncSync(fd);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        return result;
      },
    };
  }

  await applyPlan(plan, contents, {
    stateDir,
    concurrency: 1,
    retry: { attempts: 1 },
    signal: new AbortController().signal,
    listeners: [target.gate.listener],
    transportFor: recorded,
    downloads: { fetcher: new StandInSource(plan).fetcher },
  });
  closeSync(fd);
}
