// Every subcommand, loaded only when it runs: a command's module pulls in its
// parsers, SSH, the registry client or a browser, and `kubemix --version`,
// `--help` or `validate` should not pay for the others (start-up was ~700 ms
// when every module loaded eagerly). `kubemix --help` lists the commands from
// this table; test/cli-lazy.test.ts keeps it equal to what the modules declare.
import type { Command } from 'commander';
import type { CliIo } from '../io.js';

/** A command module adds its subcommand to the program. */
export type RegisterCommand = (program: Command, io: CliIo) => void;

export interface CommandEntry {
  readonly name: string;
  /** The left column of `kubemix --help` (name, `[options]`, arguments). */
  readonly term: string;
  readonly description: string;
  readonly load: () => Promise<RegisterCommand>;
}

/** In the order `kubemix --help` lists them. */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'validate',
    term: 'validate [options] <SPEC>',
    description: 'check a spec: prints {ok, errors[], warnings[]} with --json; exit 0 valid, 2 invalid',
    load: async () => (await import('./validate.js')).registerValidate,
  },
  {
    name: 'plan',
    term: 'plan [options] <SPEC>',
    description: 'show what would be deployed, and write plan.json + artifacts with --out',
    load: async () => (await import('./plan.js')).registerPlan,
  },
  {
    name: 'init',
    term: 'init [options] <SPEC>',
    description: 'write the YAML spec equivalent to SPEC (e.g. a Kubeinit string) to stdout or --out',
    load: async () => (await import('./init.js')).registerInit,
  },
  {
    name: 'up',
    term: 'up [options] [SPEC]',
    description: 'apply the plan of SPEC (or of --plan DIR) to its hosts over SSH (resumable; --check changes nothing)',
    load: async () => (await import('./up.js')).registerUp,
  },
  {
    name: 'down',
    term: 'down [options] <SPEC>',
    description:
      'reset the nodes kubemix deployed (kubeadm reset / Windows reset) and give the services node its files back',
    load: async () => (await import('./down.js')).registerDown,
  },
  {
    name: 'add-node',
    term: 'add-node [options] <SPEC>',
    description: 'after adding nodes to the spec: deploy them and update what depends on them, nothing else',
    load: async () => (await import('./add-node.js')).registerAddNode,
  },
  {
    name: 'upgrade',
    term: 'upgrade [options] <SPEC>',
    description: 'upgrade Kubernetes one minor at a time, node by node (cordon, drain, upgrade, Ready, uncordon)',
    load: async () => (await import('./upgrade.js')).registerUpgrade,
  },
  {
    name: 'images',
    term: 'images',
    description: 'the images a cluster runs: list them, pull a bundle (connected machine), push a bundle',
    load: async () => (await import('./images/index.js')).registerImages,
  },
  {
    name: 'diagnose',
    term: 'diagnose [options] <SPEC>',
    description: 'collect logs, HNS and network state from every node into a redacted bundle; name known failures',
    load: async () => (await import('./diagnose.js')).registerDiagnose,
  },
  {
    name: 'patch',
    term: 'patch [options] <SPEC>',
    description:
      'install pending updates node by node, Windows workers (with --linux Linux nodes too): cordon, drain, reboot, checks, uncordon',
    load: async () => (await import('./patch.js')).registerPatch,
  },
  {
    name: 'status',
    term: 'status [options] <SPEC>',
    description: 'per host: tasks done, left and failed (exit 1 while incomplete)',
    load: async () => (await import('./status.js')).registerStatus,
  },
  {
    name: 'logs',
    term: 'logs [options] [args...]',
    description: 'print the per-host logs of `kubemix up` runs (secrets redacted)',
    load: async () => (await import('./logs.js')).registerLogs,
  },
  {
    name: 'verify',
    term: 'verify [options] <SPEC>',
    description: 'check the underlay between every pair of nodes (UDP 4789, MTU, DNS, clocks, …) and show a matrix',
    load: async () => (await import('./verify.js')).registerVerify,
  },
  {
    name: 'kubeconfig',
    term: 'kubeconfig [options] <SPEC>',
    description: 'write the admin kubeconfig (0600) from the state directory; --merge adds it to ~/.kube/config',
    load: async () => (await import('./kubeconfig.js')).registerKubeconfig,
  },
  {
    name: 'lint',
    term: 'lint [options] [paths...]',
    description: 'check Kubernetes manifests for what would break in a mixed Linux + Windows cluster',
    load: async () => (await import('./lint.js')).registerLint,
  },
  {
    name: 'guard',
    term: 'guard',
    description: 'admission webhook that places pods by image OS and rejects what Windows cannot run',
    load: async () => (await import('./guard/index.js')).registerGuard,
  },
  {
    name: 'inventory',
    term: 'inventory',
    description: 'Ansible inventories in (import) and out (export)',
    load: async () => (await import('./inventory.js')).registerInventory,
  },
  {
    name: 'routes',
    term: 'routes [options] <SPEC>',
    description:
      'static routes for the pod network: top-of-rack (each pod CIDR → its node) and, with host-gw, per node',
    load: async () => (await import('./routes.js')).registerRoutes,
  },
  {
    name: 'topology',
    term: 'topology [options] <SPEC>',
    description: 'draw the physical and logical topology as SVG (stdout or --out FILE.svg) or HTML (--out FILE.html)',
    load: async () => (await import('./topology.js')).registerTopology,
  },
];

/** Global flags that take a value: the word after them is not a command name. */
const GLOBAL_VALUE_FLAGS = new Set(['--log-level']);

/**
 * The subcommand `argv` asks for (`help plan` asks for plan's help), or
 * undefined for the program itself (`--version`, `--help`, no arguments).
 */
export function requestedCommand(argv: readonly string[]): CommandEntry | undefined {
  for (let i = 0; i < argv.length; i += 1) {
    const word = argv[i] ?? '';
    if (GLOBAL_VALUE_FLAGS.has(word)) i += 1;
    else if (word === '--') return undefined;
    else if (!word.startsWith('-')) {
      const name = word === 'help' ? argv[i + 1] : word;
      return COMMANDS.find((c) => c.name === name);
    }
  }
  return undefined;
}
