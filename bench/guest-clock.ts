// What the guest's clock costs the Go programs of an emulated control plane,
// measured side by side in one run (docs/e2e.md, "The clock under emulation"):
// the real-cluster tier's Debian 12 cloud image booted twice under tcg with
// two vCPUs of qemu's default model, once with its kernel command line as it
// is and `tsc=reliable` taken out (the kernel then falls back to HPET) and
// once with it, each running gobuild/clock-probe from cloud-init and writing
// its figures onto the probe's own disk. Prints both columns and their ratio;
// never pass/fail. Needs root only when the cloud image is not cached yet (it
// is built like the tier builds it), plus qemu-system-x86, mtools, dosfstools
// and xorriso (scripts/apt-packages-e2e.txt). About four minutes.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cloudImage } from '../test/e2e/cloud-image.js';

const GOBUILD = fileURLToPath(new URL('../../gobuild/build.sh', import.meta.url));
const TSC = 'tsc=reliable';
/** Long enough for a tcg boot, cloud-init and the probe (about two minutes each here). */
const BOOT_LIMIT_MS = 15 * 60_000;

const run = (cmd: string, args: readonly string[]): string =>
  execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });

/** The image's kernel, initrd and command line, from its FAT boot partition (1 MiB in: cloud-image.ts). */
function bootFiles(image: string, work: string): { kernel: string; initrd: string; cmdline: string } {
  const raw = join(work, 'disk.raw');
  run('qemu-img', ['convert', '-f', 'qcow2', '-O', 'raw', image, raw]);
  const kernel = join(work, 'vmlinuz');
  const initrd = join(work, 'initrd.img');
  run('mcopy', ['-n', '-i', `${raw}@@1M`, '::/vmlinuz', kernel]);
  run('mcopy', ['-n', '-i', `${raw}@@1M`, '::/initrd.img', initrd]);
  const config = run('mcopy', ['-n', '-i', `${raw}@@1M`, '::/syslinux.cfg', '-']);
  rmSync(raw);
  const append = /^\s*APPEND\s+(.+)$/m.exec(config)?.[1];
  if (append === undefined) throw new Error(`${image}: no APPEND line in its syslinux.cfg`);
  const cmdline = append
    .split(/\s+/)
    .filter((p) => p !== TSC && !p.startsWith('console=tty0'))
    .join(' ');
  return { kernel, initrd, cmdline };
}

/** A NoCloud seed whose runcmd mounts the probe's disk, runs it there, and powers the guest off. */
function seed(work: string, name: string): string {
  const dir = join(work, `seed-${name}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'meta-data'), `instance-id: clock-${name}\nlocal-hostname: clock-${name}\n`);
  writeFileSync(
    join(dir, 'user-data'),
    `#cloud-config
runcmd:
  - mkdir -p /mnt/probe && mount -L CLOCKPROBE /mnt/probe && /mnt/probe/clock-probe > /mnt/probe/result.txt 2>&1; umount /mnt/probe; poweroff
`,
  );
  const iso = join(work, `seed-${name}.iso`);
  run('xorriso', ['-as', 'mkisofs', '-quiet', '-V', 'cidata', '-J', '-r', '-o', iso, dir]);
  return iso;
}

function probeDisk(work: string, name: string, probe: string): string {
  const disk = join(work, `probe-${name}.img`);
  run('mkfs.fat', ['-C', '-n', 'CLOCKPROBE', disk, String(16 * 1024)]);
  run('mcopy', ['-i', disk, probe, '::/clock-probe']);
  return disk;
}

type BootFiles = ReturnType<typeof bootFiles>;

/** One boot: the image's overlay, direct kernel boot with `cmdline`; returns the probe's lines as a map. */
function boot(
  image: string,
  files: BootFiles,
  work: string,
  name: string,
  cmdline: string,
  probe: string,
): Map<string, string> {
  const overlay = join(work, `${name}.qcow2`);
  run('qemu-img', ['create', '-q', '-f', 'qcow2', '-F', 'qcow2', '-b', image, overlay]);
  const disk = probeDisk(work, name, probe);
  const iso = seed(work, name);
  const started = Date.now();
  execFileSync(
    'qemu-system-x86_64',
    [
      ...['-machine', 'q35,accel=tcg', '-smp', '2', '-m', '1024', '-display', 'none', '-serial', 'null', '-no-reboot'],
      ...['-kernel', files.kernel, '-initrd', files.initrd, '-append', cmdline],
      ...['-drive', `file=${overlay},if=virtio`, '-nic', 'none'],
      ...['-drive', `file=${iso},if=virtio,media=cdrom,readonly=on`],
      ...['-drive', `file=${disk},if=virtio,format=raw`],
    ],
    { stdio: 'ignore', timeout: BOOT_LIMIT_MS },
  );
  const lines = run('mcopy', ['-n', '-i', disk, '::/result.txt', '-']);
  const result = new Map(
    lines
      .trim()
      .split('\n')
      .map((l) => l.split('\t') as [string, string]),
  );
  result.set('boot to power-off (s)', ((Date.now() - started) / 1000).toFixed(1));
  return result;
}

const work = mkdtempSync(join(tmpdir(), 'kubemix-guest-clock-'));
try {
  const image = cloudImage((line) => console.error(line)).file;
  const probeDir = run('bash', [GOBUILD, 'clock-probe']).trim();
  const probe = join(probeDir, 'bin', 'clock-probe');
  const files = bootFiles(image, work);
  const hpet = boot(image, files, work, 'hpet', files.cmdline, probe);
  const tsc = boot(image, files, work, 'tsc', `${files.cmdline} ${TSC}`, probe);
  console.log(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  console.log('tcg guest, 2 vCPUs of qemu64, 1 GiB: as booted | with tsc=reliable | ratio');
  for (const [key, value] of hpet) {
    const other = tsc.get(key) ?? '?';
    const ratio = Number(value) / Number(other);
    const shown = Number.isFinite(ratio) ? ratio.toFixed(2) : '';
    console.log(`  ${key.padEnd(44)} ${value.padStart(9)} | ${other.padStart(9)} | ${shown}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
