/** The client turns each contract error code into the class of its family, keeping code, status and request id. */
import {
  AccessDeniedError,
  AuthenticationError,
  InternalServiceError,
  InvalidParameterError,
  NotFoundError,
  QueryTimeoutError,
  RateLimitedError,
  ServiceCallError,
  serviceCallError,
} from '../../../../../packages/client/src/errors';

describe('serviceCallError', () => {
  it.each([
    [1001, InvalidParameterError],
    [1002, AuthenticationError],
    [1003, AuthenticationError],
    [1004, NotFoundError],
    [1005, NotFoundError],
    [1006, AccessDeniedError],
    [2001, QueryTimeoutError],
    [2002, NotFoundError],
    [3001, InternalServiceError],
    [4001, RateLimitedError],
  ])('maps %i to %p', (errorCode, family) => {
    const error = serviceCallError({ errorCode, errorMsg: 'why', httpStatus: 400, requestId: 'req-1' });
    expect(error).toBeInstanceOf(family);
    expect(error).toBeInstanceOf(ServiceCallError);
    expect(error).toMatchObject({ errorCode, errorMsg: 'why', httpStatus: 400, requestId: 'req-1', name: family.name });
    expect(error.message).toBe(`why (errorCode ${errorCode}, HTTP 400, request req-1)`);
  });

  it('keeps an unknown code as a plain ServiceCallError', () => {
    const error = serviceCallError({ errorCode: 9999, errorMsg: 'new', httpStatus: 418, requestId: undefined });
    expect(error.constructor).toBe(ServiceCallError);
    expect(error.message).toBe('new (errorCode 9999, HTTP 418)');
  });

  it('carries Retry-After on 4001', () => {
    const error = serviceCallError({
      errorCode: 4001,
      errorMsg: 'slow down',
      httpStatus: 429,
      requestId: 'r',
      retryAfterSeconds: 7,
    });
    expect((error as RateLimitedError).retryAfterSeconds).toBe(7);
  });
});
