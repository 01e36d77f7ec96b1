// OpenAI's Responses API through the official `openai` client (`client.responses`)
// against `qvl serve` on the tiny fixture model: the fixture cases sent as Responses
// input must give the golden greedy answers, streamed and not, the same answers and
// prompts as the chat API; structured output and tool calls must validate; and what qvl
// does not do must be a typed error naming the field.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Ajv2020 from 'ajv/dist/2020.js';
import { loadCase, startServer } from './qvl_server.mjs';

let server;
let client;
const ajv = new Ajv2020({ strict: false, allErrors: true });

before(async () => {
  server = await startServer();
  client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: 'test-key', maxRetries: 0 });
});

after(async () => {
  if (server) server.kill('SIGKILL');
});

// A fixture's chat messages as Responses input items.
function inputOf(messages) {
  return messages.map(({ role, content }) => {
    if (typeof content === 'string') return { role, content };
    return {
      role,
      content: content.map((part) => (part.type === 'text'
        ? { type: 'input_text', text: part.text }
        : { type: 'input_image', image_url: part.image_url.url, detail: 'auto' })),
    };
  });
}

function responsesRequest(name) {
  const { request, meta } = loadCase(name);
  const body = {
    model: request.model, input: inputOf(request.messages),
    max_output_tokens: request.max_tokens, temperature: 0,
  };
  return { body, meta };
}

// The golden answers run to max_tokens without an end-of-text token.
function checkGolden(response, meta) {
  assert.equal(response.object, 'response');
  assert.match(response.id, /^resp_/);
  assert.equal(response.model, 'qwen3-vl');
  assert.equal(response.output_text, meta.greedy_text);
  assert.equal(response.status, 'incomplete');
  assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
  assert.equal(response.output.length, 1);
  assert.equal(response.output[0].type, 'message');
  assert.equal(response.output[0].role, 'assistant');
  assert.equal(response.usage.input_tokens, meta.num_prompt_tokens);
  assert.equal(response.usage.output_tokens, 16);
  assert.equal(response.usage.total_tokens, meta.num_prompt_tokens + 16);
}

for (const name of ['01_text_only', '02_one_image_jpeg', '03_two_images', '04_two_turns']) {
  test(`responses.create on ${name} gives the golden answer`, async () => {
    const { body, meta } = responsesRequest(name);
    checkGolden(await client.responses.create(body), meta);
  });
}

test('a streamed response gives the golden answer, and its events build the final one', async () => {
  const { body, meta } = responsesRequest('03_two_images');
  const stream = client.responses.stream(body);
  const types = [];
  let deltas = '';
  let sequence = 0;
  for await (const event of stream) {
    types.push(event.type);
    assert.equal(event.sequence_number, sequence++);
    if (event.type === 'response.output_text.delta') deltas += event.delta;
  }
  const final = await stream.finalResponse();
  assert.equal(deltas, meta.greedy_text);
  checkGolden(final, meta);
  assert.deepEqual(types.slice(0, 4), [
    'response.created', 'response.in_progress', 'response.output_item.added',
    'response.content_part.added',
  ]);
  assert.deepEqual(types.slice(-4), [
    'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
    'response.incomplete',
  ]);
});

test('instructions and a chat system message give the same prompt and answer', async () => {
  const { body } = responsesRequest('02_one_image_jpeg');
  const { request } = loadCase('02_one_image_jpeg');
  const instructions = 'Answer in one short sentence.';
  const chat = await client.chat.completions.create({
    ...request, messages: [{ role: 'system', content: instructions }, ...request.messages],
  });
  const response = await client.responses.create({ ...body, instructions });
  assert.equal(response.instructions, instructions);
  assert.equal(response.output_text, chat.choices[0].message.content);
  assert.equal(response.usage.input_tokens, chat.usage.prompt_tokens);
});

const person = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 30 },
    age: { type: 'integer', minimum: 0, maximum: 130 },
  },
  required: ['name', 'age'],
  additionalProperties: false,
};

test('text.format json_schema answers parse and validate, streamed and not', async () => {
  const validate = ajv.compile(person);
  const { body } = responsesRequest('01_text_only');
  for (const seed of [1, 2]) {
    const request = {
      ...body, max_output_tokens: 160, temperature: 1, seed,
      text: { format: { type: 'json_schema', name: 'person', schema: person, strict: true } },
    };
    const plain = await client.responses.create(request);
    const stream = client.responses.stream(request);
    for await (const event of stream) assert.ok(event.type.startsWith('response.'));
    const streamed = await stream.finalResponse();
    for (const response of [plain, streamed]) {
      assert.equal(response.status, 'completed', JSON.stringify(response));
      assert.deepEqual(response.text.format.name, 'person');
      assert.ok(validate(JSON.parse(response.output_text)), response.output_text);
    }
    assert.equal(streamed.output_text, plain.output_text);
  }
});

const weather = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: {
    type: 'object',
    properties: {
      city: { type: 'string', maxLength: 20 },
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    },
    required: ['city', 'unit'],
    additionalProperties: false,
  },
  strict: true,
};

test('function tools: calls validate, and their output goes back as input', async () => {
  const validate = ajv.compile(weather.parameters);
  const { body } = responsesRequest('02_one_image_jpeg');
  const asked = {
    ...body, max_output_tokens: 160, temperature: 1, seed: 3, tools: [weather],
    tool_choice: 'required',
  };
  const first = await client.responses.create(asked);
  const calls = first.output.filter((item) => item.type === 'function_call');
  assert.ok(calls.length >= 1, JSON.stringify(first.output));
  for (const call of calls) {
    assert.equal(call.name, 'get_weather');
    assert.match(call.call_id, /^call_/);
    assert.ok(validate(JSON.parse(call.arguments)), call.arguments);
  }
  assert.equal(first.tools[0].name, 'get_weather');

  const stream = client.responses.stream(asked);
  let argumentsDone = 0;
  for await (const event of stream) {
    if (event.type === 'response.function_call_arguments.done') argumentsDone++;
  }
  const streamed = await stream.finalResponse();
  assert.equal(argumentsDone, streamed.output.filter((i) => i.type === 'function_call').length);
  assert.ok(argumentsDone >= 1);

  const followUp = await client.responses.create({
    ...asked,
    tool_choice: 'auto',
    max_output_tokens: 8,
    input: [
      ...asked.input,
      ...calls,
      ...calls.map((call) => ({
        type: 'function_call_output', call_id: call.call_id, output: '{"temperature": 21}',
      })),
    ],
  });
  // The calls and their results are in the prompt, and the first request's prefix (the
  // system turn with the tools, the image, the question) came from the cache.
  assert.ok(followUp.usage.input_tokens > first.usage.input_tokens + 10);
  assert.ok(followUp.usage.input_tokens_details.cached_tokens > 0);
  assert.ok(['completed', 'incomplete'].includes(followUp.status));
});

test('previous_response_id continues a stored response; retrieve and delete', async () => {
  const { body } = responsesRequest('02_one_image_jpeg');
  const first = await client.responses.create(body);
  assert.equal(first.store, true);
  const question = 'And the colours?';
  const second = await client.responses.create({
    model: body.model, input: question, previous_response_id: first.id, max_output_tokens: 8,
    temperature: 0,
  });
  assert.equal(second.previous_response_id, first.id);
  // The same conversation sent whole gives the same prompt and answer.
  const whole = await client.responses.create({
    ...body, max_output_tokens: 8,
    input: [...body.input, ...first.output, { role: 'user', content: question }],
  });
  assert.equal(second.usage.input_tokens, whole.usage.input_tokens);
  assert.equal(second.output_text, whole.output_text);
  assert.ok(second.usage.input_tokens_details.cached_tokens > 0);

  assert.deepEqual(await client.responses.retrieve(first.id), first);
  await client.responses.delete(first.id);
  await assert.rejects(client.responses.retrieve(first.id), (e) => e instanceof OpenAI.NotFoundError);
  await assert.rejects(client.responses.create({ ...body, previous_response_id: first.id }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'previous_response_id');
});

test('what qvl does not do is a typed error naming the field', async () => {
  const { body } = responsesRequest('01_text_only');
  await assert.rejects(client.responses.create({ ...body, previous_response_id: 'resp_1' }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'previous_response_id');
  await assert.rejects(client.responses.create({ ...body, tools: [{ type: 'web_search' }] }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'tools[0].type');
  await assert.rejects(client.responses.create({ ...body, model: 'gpt-4o' }),
    (e) => e instanceof OpenAI.NotFoundError && e.param === 'model');
  await assert.rejects(client.responses.create({ ...body, temperature: 9 }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'temperature');
  await assert.rejects(client.responses.retrieve('resp_0123'),
    (e) => e instanceof OpenAI.NotFoundError && e.message.includes('no stored response'));
  const anonymous = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: 'wrong', maxRetries: 0 });
  await assert.rejects(anonymous.responses.create(body), (e) => e instanceof OpenAI.AuthenticationError);
});
