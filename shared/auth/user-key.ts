/**
 * Personal access keys (docs/interface.md §14): made by `das user-key create`, sent in `X-User-AK`, and known to the service
 * only by their SHA-256 digest (`keyHashes` in the configuration). A key is 32 random bytes, so its digest cannot
 * be inverted or guessed, and storing the digest in the catalog (not in Secrets Manager) reveals no key.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Marks a string as a personal access key of this service (secret scanners and people can tell it apart). */
export const USER_KEY_PREFIX = 'dasu_';

/** What the service accepts in `X-User-AK` before hashing it: printable ASCII, as a key is. */
export const USER_KEY_PATTERN = /^[\x21-\x7e]{32,256}$/;

/** A new key: the prefix and 32 random bytes in base64url (48 characters in all, 43 of them random). */
export function generateUserKey(): string {
  return `${USER_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** The lower-case hex SHA-256 digest of a key: what the configuration lists in `keyHashes`. */
export function userKeyDigest(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/**
 * Whether two digests are equal, in time independent of where they differ. The catalog finds the candidate by
 * digest; this is the comparison that decides.
 */
export function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === 32 && right.length === 32 && timingSafeEqual(left, right);
}
