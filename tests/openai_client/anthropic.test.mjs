// Anthropic's Messages API through the official `@anthropic-ai/sdk` client against
// `qvl serve` on the tiny fixture model: the fixture cases in Anthropic's shape (images as
// base64 sources) must give the golden greedy answers through messages.create and the
// SDK's stream helper; a forced tool call must come back as a tool_use block whose input
// validates against its schema, streamed (the SDK assembles input_json_delta) and not;
// count_tokens must count the prompt; errors must reach the client as its typed errors.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import Ajv2020 from 'ajv/dist/2020.js';
import { loadCase, startServer } from './qvl_server.mjs';

let server;
let client;
const ajv = new Ajv2020({ strict: false, allErrors: true });

before(async () => {
  server = await startServer();
  // The SDK sends the key as x-api-key.
  client = new Anthropic({ baseURL: server.baseUrl, apiKey: 'test-key', maxRetries: 0 });
});

after(async () => {
  if (server) server.kill('SIGKILL');
});

// A fixture's chat messages as Anthropic messages (a system message is the top-level
// system): data URLs become base64 sources.
function anthropicMessages(messages) {
  return messages.filter(({ role }) => role !== 'system').map(({ role, content }) => {
    if (typeof content === 'string') return { role, content };
    return {
      role,
      content: content.map((part) => {
        if (part.type === 'text') return { type: 'text', text: part.text };
        const [, mediaType, data] = /^data:([^;]+);base64,(.*)$/.exec(part.image_url.url);
        return { type: 'image', source: { type: 'base64', media_type: mediaType, data } };
      }),
    };
  });
}

function system(messages) {
  const found = messages.find(({ role }) => role === 'system');
  return found ? { system: found.content } : {};
}

function caseRequest(name) {
  const { request, meta } = loadCase(name);
  return {
    body: {
      model: request.model, max_tokens: request.max_tokens, temperature: 0,
      messages: anthropicMessages(request.messages),
      ...system(request.messages),
    },
    meta,
    request,
  };
}

const text = (message) => message.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
// An answer of whitespace alone makes no text block (Anthropic refuses one sent back).
const expectedText = (meta) => (meta.greedy_text.trim() === '' ? '' : meta.greedy_text);
const stopReason = (meta) => (meta.greedy_first_eos_index === null ? 'max_tokens' : 'end_turn');

for (const name of ['01_text_only', '02_one_image_jpeg', '03_two_images', '04_two_turns']) {
  test(`messages on ${name} give the golden answer, streamed and not`, async () => {
    const { body, meta, request } = caseRequest(name);
    const message = await client.messages.create(body);
    assert.equal(message.type, 'message');
    assert.equal(message.role, 'assistant');
    assert.equal(message.model, 'qwen3-vl');
    assert.match(message.id, /^msg_/);
    assert.equal(text(message), expectedText(meta));
    assert.equal(message.stop_reason, stopReason(meta));
    assert.equal(message.usage.input_tokens + message.usage.cache_read_input_tokens,
      meta.num_prompt_tokens);

    const stream = client.messages.stream(body);
    let streamed = '';
    stream.on('text', (delta) => { streamed += delta; });
    const final = await stream.finalMessage();
    assert.equal(streamed, expectedText(meta));
    assert.equal(text(final), expectedText(meta));
    assert.equal(final.stop_reason, stopReason(meta));
    assert.equal(final.usage.output_tokens, message.usage.output_tokens);

    const counted = await client.messages.countTokens({
      model: body.model, messages: body.messages, ...system(request.messages),
    });
    assert.equal(counted.input_tokens, meta.num_prompt_tokens);
  });
}

const weather = {
  name: 'get_weather',
  description: 'Current weather of a city',
  input_schema: {
    type: 'object',
    properties: {
      city: { type: 'string', maxLength: 20 },
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    },
    required: ['city', 'unit'],
    additionalProperties: false,
  },
};

test('a forced tool is a tool_use block with a valid input, streamed and not', async () => {
  const validate = ajv.compile(weather.input_schema);
  const body = {
    max_tokens: 160, temperature: 1, tools: [weather],
    tool_choice: { type: 'tool', name: 'get_weather' },
    messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
  };
  for (const stream of [false, true]) {
    const message = stream
      ? await client.messages.stream(body).finalMessage()
      : await client.messages.create(body);
    assert.equal(message.stop_reason, 'tool_use', JSON.stringify(message));
    const calls = message.content.filter((b) => b.type === 'tool_use');
    assert.equal(calls.length, 1, JSON.stringify(message));
    assert.equal(calls[0].name, 'get_weather');
    assert.match(calls[0].id, /^toolu_/);
    assert.ok(validate(calls[0].input), `${JSON.stringify(calls[0].input)}: ${ajv.errorsText(validate.errors)}`);

    // The result goes back as a tool_result and the model answers.
    const followUp = await client.messages.create({
      max_tokens: 4, temperature: 0, tools: [weather],
      messages: [
        ...body.messages,
        { role: 'assistant', content: message.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: calls[0].id, content: '21 C' }] },
      ],
    });
    assert.equal(followUp.usage.output_tokens, 4);
  }
});

test('the model list reads as Anthropic\'s page', async () => {
  const ids = [];
  for await (const model of client.models.list()) {
    assert.equal(model.type, 'model');
    ids.push(model.id);
  }
  assert.ok(ids.includes('qwen3-vl'), JSON.stringify(ids));
});

test('errors reach the client as its typed errors', async () => {
  await assert.rejects(
    client.messages.create({ model: 'claude-opus-4', max_tokens: 4, messages: [{ role: 'user', content: 'Hi' }] }),
    (err) => err instanceof Anthropic.NotFoundError && err.error.error.type === 'not_found_error'
      && /claude-opus-4/.test(err.error.error.message),
  );
  await assert.rejects(
    client.messages.create({
      max_tokens: 4,
      messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } }] }],
    }),
    (err) => err instanceof Anthropic.BadRequestError && err.error.error.type === 'invalid_request_error'
      && /messages\[0\]\.content\[0\]/.test(err.error.error.message),
  );
  const stranger = new Anthropic({ baseURL: server.baseUrl, apiKey: 'wrong-key', maxRetries: 0 });
  await assert.rejects(
    stranger.messages.create({ max_tokens: 4, messages: [{ role: 'user', content: 'Hi' }] }),
    (err) => err instanceof Anthropic.AuthenticationError,
  );
});
