// POSIX shell: one single-quoted word. Inside '…' every byte is literal
// (POSIX.1-2017 XCU 2.2.2), so the only character to handle is the quote
// itself: close, write it escaped, reopen.
import { assertEncodable } from './errors.js';

export function shellQuote(text: string): string {
  assertEncodable('sh', text);
  return `'${text.replaceAll("'", "'\\''")}'`;
}
