// Every rule, in the order `kubemix lint --rules` lists them.
import { IMAGE_RULES } from './image.js';
import { HOSTPROCESS_RULES, hostProcessPodSecurity } from './hostprocess.js';
import { LINUX_RULES } from './linux.js';
import { PLACEMENT_RULES } from './placement.js';
import { SERVICE_RULES } from './services.js';
import type { InputRule, Rule, SetRule, TemplateRule } from './types.js';
import { WINDOWS_RULES } from './windows.js';

export const UNPARSEABLE: InputRule = {
  scope: 'input',
  id: 'input/unparseable',
  severity: 'error',
  why: 'A manifest that is not valid YAML or JSON cannot be applied or checked (exit code 2).',
  hint: 'fix the syntax at the reported line and column',
  needsCluster: false,
  fixable: false,
};

export const UNREADABLE: InputRule = {
  scope: 'input',
  id: 'input/unreadable',
  severity: 'error',
  why: 'A path that cannot be read cannot be checked (exit code 2).',
  hint: 'check the path and its permissions',
  needsCluster: false,
  fixable: false,
};

export const TOO_LARGE: InputRule = {
  scope: 'input',
  id: 'input/too-large',
  severity: 'error',
  why: 'Parsing keeps a node tree of the whole file in memory: a file far larger than any set of manifests would take minutes and gigabytes (exit code 2).',
  hint: 'split the file (one per chart, kind or namespace) and lint the directory',
  needsCluster: false,
  fixable: false,
};

export const TEMPLATE_RULES: readonly TemplateRule[] = [
  ...PLACEMENT_RULES,
  ...IMAGE_RULES,
  ...WINDOWS_RULES,
  ...LINUX_RULES,
  ...HOSTPROCESS_RULES,
];
export const SET_RULES: readonly SetRule[] = [hostProcessPodSecurity, ...SERVICE_RULES];
export const INPUT_RULES: readonly InputRule[] = [UNPARSEABLE, UNREADABLE, TOO_LARGE];

export const RULES: readonly Rule[] = [...TEMPLATE_RULES, ...SET_RULES, ...INPUT_RULES];

export function ruleById(id: string): Rule | undefined {
  return RULES.find((r) => r.id === id);
}
