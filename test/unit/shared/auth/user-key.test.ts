/** Personal access keys (docs/interface.md §14): made at random, known by their SHA-256 digest, compared in constant time. */
import { generateUserKey, sameDigest, USER_KEY_PATTERN, userKeyDigest } from '../../../../shared/auth/user-key';

const DIGEST = userKeyDigest('dasu_unit-test-key-0000000000000000000000');
const OTHER_DIGEST = userKeyDigest('dasu_unit-test-key-0000000000000000000000-other');

describe('personal access keys', () => {
  it('are at least 32 random characters, with a recognisable prefix, and differ each time', () => {
    const keys = new Set(Array.from({ length: 50 }, generateUserKey));
    expect(keys.size).toBe(50);
    for (const key of keys) {
      expect(key).toMatch(/^dasu_[A-Za-z0-9_-]{43}$/);
      expect(USER_KEY_PATTERN.test(key)).toBe(true);
    }
  });

  it('are known by their lower-case hex SHA-256 digest', () => {
    // echo -n 'abc' | sha256sum
    expect(userKeyDigest('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('compare equal only when the digests are', () => {
    expect(sameDigest(DIGEST, DIGEST)).toBe(true);
    expect(sameDigest(DIGEST, OTHER_DIGEST)).toBe(false);
    expect(sameDigest(DIGEST, 'abc')).toBe(false);
  });
});
