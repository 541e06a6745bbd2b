// One escaper per output format a spec value can reach. Every place that
// writes a value into a script or config file goes through one of these.
export { UnrepresentableError, type EscapeFormat } from './errors.js';
export { shellQuote } from './sh.js';
export { systemdEnvironment, systemdQuote } from './systemd.js';
export { tomlBasicString, tomlString } from './toml.js';
export { psList, psQuote } from './powershell.js';
export { iniValue } from './ini.js';
export { xmlEscape } from './xml.js';
export { yamlString } from './yaml.js';
export { ShellTemplateError, ShellText, shell, shellCode, shellLines, type ShellValue } from './sh-script.js';
