/** A DynamoDB client whose `send` a test watches, answers or fails, with everything else the client's own. */

/** A command as `send` receives it: its input is plain data. */
export interface SentCommand {
  readonly input: Record<string, unknown>;
}

/**
 * The client, with each `send` going to `intercept` with the command and `send`, which passes that command on to
 * the real client (with the call's other arguments) and gives its answer. `intercept` answers the call: with what
 * `send` gave, something it makes up, or a rejection.
 */
export function interceptSend<Client extends { send: unknown }>(
  client: Client,
  intercept: (command: SentCommand, send: () => Promise<unknown>) => Promise<unknown>,
): Client {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver);
      return (command: SentCommand, ...rest: unknown[]) =>
        intercept(command, () =>
          (target.send as (...args: unknown[]) => Promise<unknown>).call(target, command, ...rest),
        );
    },
  });
}
