import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { expect } from 'chai';
import { portRequests } from './port-requests.js';

class PortClosedError extends Error {}

describe('portRequests', () => {
  let channel: MessageChannel;

  beforeEach(() => {
    channel = new MessageChannel();
  });

  afterEach(() => {
    channel.port1.close();
  });

  function requestsOn(port: MessagePort) {
    return portRequests(port, {
      isAnswer: (message): message is { id: number; value: string } => (message as { kind?: string }).kind === 'answer',
      closedError: () => new PortClosedError('closed'),
    });
  }

  it('settles each request with the answer carrying its id, whatever order the answers come in and whatever else arrives', async () => {
    const requests = requestsOn(channel.port1);
    const asked: { id: number; question: string }[] = [];
    channel.port2.on('message', (message: { id: number; question: string }) => {
      asked.push(message);
      if (asked.length < 2) return;
      channel.port2.postMessage({ kind: 'news' });
      for (const { id, question } of asked.reverse()) channel.port2.postMessage({ kind: 'answer', id, value: `re: ${question}` });
    });
    const answers = await Promise.all(['one', 'two'].map((question) => requests.request((id) => ({ id, question }))));
    expect(answers.map((answer) => answer.value)).to.deep.equal(['re: one', 're: two']);
  });

  it('rejects the requests pending when the port closes, and those made after', async () => {
    const requests = requestsOn(channel.port1);
    const pending = requests.request((id) => ({ id })).catch((caught: unknown) => caught);
    channel.port2.close();
    expect(await pending).to.be.instanceOf(PortClosedError);
    expect(await requests.request((id) => ({ id })).catch((caught: unknown) => caught)).to.be.instanceOf(PortClosedError);
  });
});
