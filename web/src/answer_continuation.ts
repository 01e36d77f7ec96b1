// Continuing an answer cut off at the length limit, as ChatGPT's and llama.cpp's
// Continue: the conversation goes to the server with the answer as its last message and
// vLLM's continue_final_message, and the server writes on from the answer's last token,
// sending the new text only. It streams onto the end of the same answer (the same
// version), whose figures become those of the continuation: its prompt tokens hold the
// answer so far, so the context meter still counts the whole conversation. The tokens of
// the parts before it are kept, for the answer's details to count the whole answer.
import type { ChatRequestBody } from "./api/types";
import type { AssistantMessage } from "./conversation";
import { answerPart } from "./timings";

/** Whether `answer` can be continued: it ended at the length limit with text to write on
 * from. An answer cut while a thinking model reasoned has none, and its reasoning is never
 * sent back. */
export function canContinue(answer: AssistantMessage): boolean {
  return answer.status === "done" && answer.finishReason === "length" && answer.text !== "" && !answer.error;
}

/** `body` built from the branch up to the answer, asking the server to write on from it:
 * continue_final_message with add_generation_prompt false, as vLLM wants them. A JSON
 * answer goes on without its response_format, whose grammar would start a new JSON value
 * where the answer is halfway through one. */
export function continuationRequest(body: ChatRequestBody): ChatRequestBody {
  const { response_format: _unresumable, ...rest } = body;
  return { ...rest, add_generation_prompt: false, continue_final_message: true };
}

const REPLACED = ["status", "finishReason", "usage", "timings", "clientTtftMs", "streamed", "earlierParts"] as const;

/** What a continuation replaces of an answer: its state, flag and figures. */
export type AnswerFigures = Pick<AssistantMessage, (typeof REPLACED)[number]>;

/** Readies `answer` for its continuation: written again, no longer flagged as cut off, its
 * figures left for the continuation's with its tokens so far kept as a part, and without
 * spaces or line breaks at its end, as the server continues it (transformers'
 * continue_final_message strips them). Returns what it had, for `restoreAnswer`. */
export function beginContinuation(answer: AssistantMessage): AnswerFigures {
  answer.text = answer.text.trimEnd();
  const before = Object.fromEntries(
    REPLACED.flatMap((key) => (answer[key] === undefined ? [] : [[key, answer[key]]])),
  ) as AnswerFigures;
  clearFigures(answer);
  answer.earlierParts = [...(before.earlierParts ?? []), answerPart(before.usage, before.streamed)];
  answer.status = "streaming";
  return before;
}

/** After a failed continuation: the answer as it was, with any text that came, still cut
 * off, so that Continue asks again. */
export function restoreAnswer(answer: AssistantMessage, before: AnswerFigures): void {
  clearFigures(answer);
  Object.assign(answer, before);
}

function clearFigures(answer: AssistantMessage): void {
  for (const key of REPLACED) {
    if (key !== "status") delete answer[key];
  }
}
