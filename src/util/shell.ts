// POSIX shell quoting for values planned into scripts: one single-quoted
// word whatever the value holds, so no value can end the word early.
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}
