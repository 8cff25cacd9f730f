/**
 * The one assertion of a failure: the envelope of docs/interface.md §2 with its code and message, and the HTTP
 * status that goes with the code. The statuses are written out here from the document, not taken from the
 * service, so a wrong mapping in the service fails the tests.
 */

/** docs/interface.md §2: the HTTP status of each error code. */
export const STATUS_OF_CODE: Readonly<Record<number, number>> = {
  1001: 400,
  1002: 401,
  1003: 401,
  1004: 404,
  1005: 404,
  1006: 403,
  2001: 504,
  2002: 404,
  3001: 500,
  4001: 429,
};

/** The failure envelope's body; any message unless one is given (a regular expression matches it). */
export function failureWith(errorCode: number, errorMsg?: string | RegExp) {
  return {
    success: false,
    msg: null,
    data: null,
    errorCode,
    errorMsg:
      errorMsg === undefined
        ? expect.any(String)
        : typeof errorMsg === 'string'
          ? errorMsg
          : expect.stringMatching(errorMsg),
  };
}

/** Assert a response is the failure envelope with this code (and message), under the code's HTTP status. */
export function expectFailure(
  response: { status: number; body: unknown },
  errorCode: number,
  errorMsg?: string | RegExp,
): void {
  expect({ status: response.status, body: response.body }).toEqual({
    status: STATUS_OF_CODE[errorCode],
    body: failureWith(errorCode, errorMsg),
  });
}
