import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FrameReader, driverCommand, frameHeader, powershellDriver, shellQuote, psQuote } from './framing.js';
import { SH_DRIVER, frameShCommand, shSeconds } from './sh-driver.js';
import { uploadScript } from './scripts.js';

function read(marker: string, chunks: readonly string[]): { out: string; ends: string[] } {
  let out = '';
  const ends: string[] = [];
  const r = new FrameReader(
    marker,
    (c) => (out += c.toString()),
    (e) => ends.push(`${e.id}:${e.code}|${out}`),
  );
  for (const c of chunks) r.push(Buffer.from(c));
  return { out, ends };
}

describe('session framing', () => {
  it('splits output and end frames, even when a marker is cut across chunks', () => {
    const m = 'KMabc123';
    const whole = `hello\nworld\n${m} 1 0\nsecond\n${m} 2 7\n`;
    for (let cut = 1; cut < whole.length; cut++) {
      const { ends } = read(m, [whole.slice(0, cut), whole.slice(cut)]);
      assert.deepEqual(ends, ['1:0|hello\nworld', '2:7|hello\nworldsecond'], `cut at ${cut}`);
    }
  });

  it("reads the host's time of a command when the driver gives it, and none from an older driver or bash", () => {
    const m = 'KMabc123';
    const ends: unknown[] = [];
    const r = new FrameReader(
      m,
      () => undefined,
      (e) => ends.push(e),
    );
    r.push(Buffer.from(`\n${m} 1 0 1 1234\n\n${m} 2 3 2 -\n\n${m} 3 0\n`));
    assert.deepEqual(ends, [
      { id: 1, code: 0, part: 1, hostMs: 1234 },
      { id: 2, code: 3, part: 2 },
      { id: 3, code: 0, part: 1 },
    ]);
  });

  it('never treats output that merely resembles a marker as an end', () => {
    const { ends, out } = read('KMnonce', ['KMnonce 1 0 at line start\n', 'xKMnonce 1 0\n']);
    assert.deepEqual(ends, []);
    assert.ok(out.startsWith('KMnonce 1 0 at line start'));
  });

  it('passes on output at once, holding back only a tail that could begin a marker', () => {
    const m = 'KMlongnonce0123456789abcdef';
    let out = '';
    const r = new FrameReader(
      m,
      (c) => (out += c.toString()),
      () => undefined,
    );
    r.push(Buffer.from('listening\n'));
    assert.equal(out, 'listening', 'a short line is not held back until the command ends');
    r.push(Buffer.from(`${m.slice(0, 4)}`));
    assert.equal(out, 'listening', 'a possible marker start is held back');
    r.push(Buffer.from('zz'));
    assert.equal(out, `listening\n${m.slice(0, 4)}zz`);
  });

  it('frames scripts by byte length (multi-byte text included)', () => {
    const script = Buffer.from('echo ünïcode');
    assert.equal(frameHeader(3, script, Buffer.from('in'), 'root', 29.2).toString(), `3 ${script.length} 2 root 30\n`);
  });

  it('frames a check and an apply with a limit each, to the millisecond; ends say which part gave the code', () => {
    const parts = [
      { script: Buffer.from('test -f /x'), timeoutMs: 1500 },
      { script: Buffer.from('touch /x'), timeoutMs: 2000 },
    ];
    assert.equal(
      frameShCommand(5, parts, Buffer.from('in'), 'root').toString(),
      '5 root 2 1.5 L 2 L\ntest -f /x\ntouch /x\nin',
    );
    assert.equal(shSeconds(0), '0.001', 'never 0, which bash read -t takes as a poll');
    assert.throws(() => frameShCommand(1, [], Buffer.alloc(0), 'root'), /1 or 2 scripts/);
    const { ends } = read('KMp', ['a\nKMp 5 3 2\nb\nKMp 6 0\n']);
    assert.deepEqual(ends, ['5:3|a', '6:0|ab']);
    const parts2: number[] = [];
    new FrameReader(
      'KMp',
      () => undefined,
      (e) => parts2.push(e.part),
    ).push(Buffer.from('\nKMp 5 3 2\n\nKMp 6 0\n'));
    assert.deepEqual(parts2, [2, 1], 'part 2: the apply ran; no part field (PowerShell): 1');
  });

  it('keeps scripts and secrets off the command line', () => {
    const cmd = driverCommand('sh', 'KMx');
    assert.ok(cmd.startsWith("exec bash --norc -c '") && cmd.endsWith("' kubemix KMx"));
    assert.ok(SH_DRIVER.includes('head -c "$1" > "$2"'), 'the script arrives on stdin into a file');
    assert.ok(SH_DRIVER.includes('umask 077'));
    assert.ok(SH_DRIVER.includes('sudo -n --'), 'non-root users get non-interactive sudo for root tasks');
    assert.equal(shellQuote("it's"), `'it'\\''s'`);
  });

  // Not executed: no Windows host here. These check the generated text only.
  it('PowerShell driver (static): reads framed bytes from stdin and writes end markers', () => {
    const ps = powershellDriver('KMwin');
    assert.match(ps, /\$m = 'KMwin'/);
    assert.match(ps, /\[Console\]::OpenStandardInput\(\)/);
    assert.match(ps, /\$id, \$sl, \$il, \$pv, \$to = \$h\.Split\(' '\)/);
    assert.match(ps, /RedirectStandardInput = \$true/);
    assert.match(ps, /WaitForExit\(\[int\]\$to \* 1000\)/);
    assert.match(ps, /taskkill\.exe \/T \/F \/PID/);
    assert.match(ps, /\[Console\]::Out\.Write\("`n\$m \$id \$rc`n"\)/);
    assert.match(ps, /\[Console\]::Error\.Write\("`n\$m \$id \$rc`n"\)/);
    const opens = (ps.match(/\{/g) ?? []).length;
    assert.equal(opens, (ps.match(/\}/g) ?? []).length, 'balanced braces');
    const cmd = driverCommand('powershell', 'KMwin');
    const encoded = cmd.split(' ').at(-1) ?? '';
    assert.equal(
      Buffer.from(encoded, 'base64').toString('utf16le'),
      ps,
      '-EncodedCommand carries the driver as UTF-16LE base64',
    );
    assert.equal(psQuote("C:\\it's"), "'C:\\it''s'");
    assert.match(
      uploadScript('powershell', 'C:\\k\\x.conf', '0600', ''),
      /Move-Item -Force -Path \$t -Destination \$dest/,
    );
  });
});

describe('the sh driver, run here', () => {
  it('receives every script byte-exact, inline or by length, and the stdin after it', async () => {
    const { spawn } = await import('node:child_process');
    const marker = 'KMtestmarker0123';
    const tricky = [
      '# back\\slash \\c \\n \\0101 %s %b\r\n\ttab ünï \x7f\x01',
      '',
      'no newline at the end',
      `# long ${'x'.repeat(3000)}`,
    ];
    const child = spawn('bash', ['--norc', '-c', SH_DRIVER, 'kubemix', marker], { stdio: ['pipe', 'pipe', 'inherit'] });
    const outputs: string[] = [];
    let current: Buffer[] = [];
    const reader = new FrameReader(
      marker,
      (c) => current.push(Buffer.from(c)),
      () => {
        outputs.push(Buffer.concat(current).toString('utf8'));
        current = [];
      },
    );
    let started = false;
    const done = new Promise<void>((resolve) => child.on('close', () => resolve()));
    child.stdout.on('data', (chunk: Buffer) => {
      if (!started) {
        const eol = chunk.indexOf(10);
        started = true;
        chunk = chunk.subarray(eol + 1);
      }
      reader.push(chunk);
    });
    const scripts = tricky.map((t) => `${t}\ncat "$0"; cat\n`);
    scripts.forEach((script, i) => {
      const frame = frameShCommand(
        i + 1,
        [{ script: Buffer.from(script), timeoutMs: 30_000 }],
        Buffer.from(`stdin ${i}`),
        'user',
      );
      assert.equal(frame.includes(Buffer.from(`${i + 1} user 7 30 L\n`)), i !== 3, `inline only when short (${i})`);
      child.stdin.write(frame);
    });
    child.stdin.end();
    await done;
    // Each output: the script's own bytes (cat "$0"), then its stdin, then the frame's newline.
    assert.deepEqual(
      outputs,
      scripts.map((s, i) => `${s}stdin ${i}`),
    );
  });
});
