/**
 * Stand-in for an operation handler that is not written yet (see `handlerEntry`): it lets the infra tests
 * synthesize every route. It is never deployed — the app itself refuses a route without its handler.
 */
export const handler = async () => ({
  statusCode: 500,
  body: JSON.stringify({ success: false, msg: null, data: null, errorCode: 3001, errorMsg: 'not implemented' }),
});
