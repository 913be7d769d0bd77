/**
 * A message over the cli socket the way waiter sends one (`CliClient`), one session per
 * message: it resolves once the daemon accepted it, then records every reply line the
 * session gets, and keeps listening after the end (so a reply routed to the wrong session
 * shows up). `leave` hangs up early; a daemon that goes away ends the session too.
 */
import { CliClient, replyOfType } from '../../cli/cliClient.ts';
import { newReceivedReply, receive, type ReceivedReply } from './receivedReply.ts';

export type CliAsk = Readonly<{ reply: ReceivedReply; leave(): void }>;

export const askOverCli = async (dataDir: string, text: string, from: string): Promise<CliAsk> => {
  const client = await CliClient.connect(dataDir);
  const reply = newReceivedReply(`cli "${text}"`);
  const leave = () => {
    reply.gone = true;
    client.close();
  };
  client.onReply((line) => {
    if (line.type === 'chunk' || line.type === 'message') receive(reply, line.type, line.text);
    else if (line.type === 'end') receive(reply, line.type, line.text, line.outcome);
  });
  client.onClose(() => (reply.gone = true));
  try {
    reply.inputId = (await client.ask({ type: 'message', text, from }, replyOfType('accepted'))).inputId;
  } catch (error) {
    leave();
    throw error;
  }
  return { reply, leave };
};

/** Presses stop the way `waiter --stop` does; resolves once the daemon says it stopped. */
export const stopOverCli = async (dataDir: string): Promise<void> => {
  const client = await CliClient.connect(dataDir);
  try {
    await client.ask({ type: 'stop' }, replyOfType('stopped'));
  } finally {
    client.close();
  }
};
