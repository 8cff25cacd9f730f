import {
  nextFunctionVersions,
  parseFunctionVersions,
  sourceDigest,
} from '../../../../shared/catalog/function-versions';

const GREET = 'export default async function greet(p) { return p; }';
const GREET_DIGEST = sourceDigest(GREET);

describe('nextFunctionVersions', () => {
  it('starts a new function at version 1 with the deploy time', () => {
    expect(nextFunctionVersions({}, [{ appCode: 'app', name: 'greet', source: GREET }], 1000)).toEqual({
      greet: { version: 1, sourceSha256: GREET_DIGEST, modifiedAtMs: 1000 },
    });
  });

  it('keeps an unchanged source, moves a changed one, and keeps the record of a removed one', () => {
    const previous = {
      greet: { version: 4, sourceSha256: GREET_DIGEST, modifiedAtMs: 1000 },
      tag: { version: 2, sourceSha256: sourceDigest('old'), modifiedAtMs: 1500 },
      gone: { version: 7, sourceSha256: sourceDigest('gone'), modifiedAtMs: 500 },
    };
    const next = nextFunctionVersions(
      previous,
      [
        { appCode: 'app', name: 'greet', source: GREET },
        { appCode: 'app', name: 'tag', source: 'new' },
      ],
      2000,
    );
    expect(next).toEqual({
      greet: { version: 4, sourceSha256: GREET_DIGEST, modifiedAtMs: 1000 },
      tag: { version: 3, sourceSha256: sourceDigest('new'), modifiedAtMs: 2000 },
      gone: { version: 7, sourceSha256: sourceDigest('gone'), modifiedAtMs: 500 },
    });
  });
});

describe('parseFunctionVersions', () => {
  it('reads nothing from an item that has no versions, and skips malformed entries', () => {
    expect(parseFunctionVersions(undefined)).toEqual({});
    expect(parseFunctionVersions([1, 2])).toEqual({});
    expect(
      parseFunctionVersions({
        ok: { version: 2, sourceSha256: 'ab', modifiedAtMs: 10 },
        noVersion: { sourceSha256: 'ab', modifiedAtMs: 10 },
        notObject: 'x',
      }),
    ).toEqual({ ok: { version: 2, sourceSha256: 'ab', modifiedAtMs: 10 } });
  });
});
