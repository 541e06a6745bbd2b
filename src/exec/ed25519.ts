// ed25519 SSH key pairs (VM host keys) made with ssh2, checked before use.
// ssh2 1.17's generateKeyPairSync('ed25519') strips leading zero bytes from
// the raw public key (lib/keygen.js, parseDERs; mscdex/ssh2#1390, #1513): one
// pair in 256 carries a 31-byte public key in both its halves, which OpenSSH
// and ssh2's own parser refuse. As a guest's host key, sshd could not load it
// and the known_hosts pin kubemix wrote would never match: the guest would be
// unreachable. A malformed pair is thrown away and another made.
import ssh2 from 'ssh2';

export interface KeyPairOptions {
  readonly comment?: string;
  /** Encrypts the private key (bcrypt KDF) with `cipher`. */
  readonly passphrase?: string;
  readonly cipher?: string;
}

export interface SshKeyPair {
  /** OpenSSH private key file text. */
  readonly private: string;
  /** `ssh-ed25519 BASE64 [comment]`. */
  readonly public: string;
}

/** An ed25519 public key blob: string "ssh-ed25519" (4 + 11 bytes) and string of the 32-byte key (4 + 32). */
const ED25519_BLOB_BYTES = 51;

/** Both halves parse, as ed25519, with the same 32-byte public key. */
export function wellFormedEd25519(pair: SshKeyPair, passphrase?: string): boolean {
  const pub = ssh2.utils.parseKey(pair.public);
  const priv = ssh2.utils.parseKey(pair.private, passphrase);
  if (pub instanceof Error || priv instanceof Error) return false;
  const blob = pub.getPublicSSH();
  return pub.type === 'ssh-ed25519' && blob.length === ED25519_BLOB_BYTES && blob.equals(priv.getPublicSSH());
}

type Generate = (options: KeyPairOptions) => SshKeyPair;

const viaSsh2: Generate = (options) =>
  ssh2.utils.generateKeyPairSync('ed25519', {
    ...(options.comment === undefined ? {} : { comment: options.comment }),
    ...(options.passphrase === undefined
      ? {}
      : { passphrase: options.passphrase, cipher: options.cipher ?? 'aes256-ctr' }),
  });

/** A well-formed ed25519 key pair; `generate` is ssh2's (a test gives its own). */
export function ed25519KeyPair(options: KeyPairOptions = {}, generate: Generate = viaSsh2): SshKeyPair {
  // (255/256)^16: a run of 16 malformed pairs would take a broken generator, not chance.
  for (let attempt = 0; attempt < 16; attempt++) {
    const pair = generate(options);
    if (wellFormedEd25519(pair, options.passphrase)) return pair;
  }
  throw new Error('ssh2 made no well-formed ed25519 key pair in 16 attempts');
}
