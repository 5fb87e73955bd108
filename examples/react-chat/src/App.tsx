import { useChat } from '@ai-sdk/react';
import { getToolName, isToolUIPart, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import type { AirlockUIMessage } from 'airlock-agents/ai-sdk';
import { type FormEvent, useState } from 'react';
import { CHAT_ID, transport } from './agent';

type Part = AirlockUIMessage['parts'][number];
type ToolPart = Extract<Part, { toolCallId: string }>;

export function App({ initialMessages }: { initialMessages: AirlockUIMessage[] }) {
  const [input, setInput] = useState('');
  const { messages, sendMessage, status, stop, error, addToolApprovalResponse } =
    useChat<AirlockUIMessage>({
      id: CHAT_ID,
      transport,
      messages: initialMessages,
      // Once every approval of the answer is given, the run goes on.
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      // A run that waited for approval when the page was reloaded asks again.
      resume: true,
    });
  const busy = status === 'submitted' || status === 'streaming';

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!input.trim() || busy) return;
    void sendMessage({ text: input });
    setInput('');
  };

  return (
    <main>
      <h1>Airlock · useChat</h1>
      <section className="messages">
        {messages.map((message) => (
          <article
            key={message.id}
            className={`message ${message.role}${message.metadata?.refused ? ' refused' : ''}`}
            data-role={message.role}
          >
            {message.parts.map((part, index) => (
              <MessagePart
                // Parts keep their place in a message: the index is a stable key here.
                // biome-ignore lint/suspicious/noArrayIndexKey: see above.
                key={index}
                part={part}
                onApproval={(id, approved) =>
                  addToolApprovalResponse({
                    id,
                    approved,
                    ...(approved ? {} : { reason: 'The user declined.' }),
                  })
                }
              />
            ))}
            {/* A turn the model endpoint refused (input-refused) is kept, never sent again. */}
            {message.metadata?.refused && <p className="refused-note">Not sent: refused.</p>}
          </article>
        ))}
      </section>
      {error && <p className="error">{error.message}</p>}
      <form onSubmit={submit}>
        <input
          value={input}
          onChange={(event) => setInput(event.target.value)}
          placeholder="What is the weather in Paris?"
          aria-label="Message"
        />
        {busy ? (
          <button type="button" onClick={() => void stop()}>
            Stop
          </button>
        ) : (
          <button type="submit">Send</button>
        )}
      </form>
      <p className="status" data-status={status}>
        {status}
      </p>
    </main>
  );
}

function MessagePart({
  part,
  onApproval,
}: {
  part: Part;
  onApproval: (approvalId: string, approved: boolean) => void;
}) {
  if (part.type === 'text') return <p className="text">{part.text}</p>;
  if (part.type === 'reasoning') return <p className="reasoning">{part.text}</p>;
  if (isToolUIPart(part)) return <ToolCard part={part as ToolPart} onApproval={onApproval} />;
  return null;
}

/** A tool call: its arguments as they stream, then its result, or the approval it waits for. */
function ToolCard({
  part,
  onApproval,
}: {
  part: ToolPart;
  onApproval: (approvalId: string, approved: boolean) => void;
}) {
  const name = getToolName(part);
  return (
    <div className="tool-card" data-tool={name} data-state={part.state}>
      <header>
        <strong>{name}</strong> <span className="state">{part.state}</span>
      </header>
      <pre className="input">{JSON.stringify(part.input ?? {}, null, 1)}</pre>
      {part.state === 'approval-requested' && (
        <div className="approval">
          <button type="button" onClick={() => onApproval(part.approval.id, true)}>
            Approve
          </button>
          <button type="button" onClick={() => onApproval(part.approval.id, false)}>
            Decline
          </button>
        </div>
      )}
      {part.state === 'output-available' && (
        <pre className="output">{JSON.stringify(part.output, null, 1)}</pre>
      )}
      {part.state === 'output-error' && <p className="tool-error">{part.errorText}</p>}
      {part.state === 'output-denied' && <p className="tool-error">Declined.</p>}
    </div>
  );
}
