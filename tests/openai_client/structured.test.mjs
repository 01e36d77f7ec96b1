// Structured output and tool calls through the official `openai` client against
// `qvl serve` on the tiny fixture model. Its free output is gibberish, so every answer
// below is valid only because the grammar made it so: each one must parse and validate
// against its schema with a real validator (Ajv), streamed and not, for several seeds.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { loadCase, startServer } from './qvl_server.mjs';

let server;
let client;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

before(async () => {
  server = await startServer();
  client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: 'test-key', maxRetries: 0 });
});

after(async () => {
  if (server) server.kill('SIGKILL');
});

const schemas = {
  receipt: {
    type: 'object',
    properties: {
      merchant: { type: 'string', maxLength: 40 },
      date: { type: 'string', format: 'date' },
      total: { type: 'number', minimum: 0 },
      items: {
        type: 'array', maxItems: 3,
        items: {
          type: 'object',
          properties: { name: { type: 'string', maxLength: 20 }, price: { type: 'number' } },
          required: ['name', 'price'], additionalProperties: false,
        },
      },
    },
    required: ['merchant', 'date', 'total', 'items'],
    additionalProperties: false,
  },
  person: {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 30 },
      age: { type: 'integer', minimum: 0, maximum: 130 },
      email: { type: 'string', format: 'email' },
    },
    required: ['name', 'age'],
  },
  enumColor: { type: 'string', enum: ['red', 'green', 'blue'] },
  enumMixed: { enum: ['a', 1, null, true, { k: [1, 2] }] },
  constValue: { const: { version: 2, kind: 'invoice' } },
  integerRange: { type: 'integer', minimum: -50, maximum: 1234 },
  exclusiveRange: { type: 'integer', exclusiveMinimum: 10, exclusiveMaximum: 20 },
  boolean: { type: 'boolean' },
  nullable: { type: ['string', 'null'], maxLength: 10 },
  union: { type: ['integer', 'boolean', 'array'], items: { type: 'integer' }, maxItems: 3 },
  tuple: {
    type: 'array',
    prefixItems: [{ type: 'string', maxLength: 5 }, { type: 'integer' }, { type: 'boolean' }],
    items: false,
  },
  boundedArray: { type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 4 },
  pattern: { type: 'string', pattern: '^[A-Z]{3}-[0-9]{2,4}$' },
  uuid: { type: 'string', format: 'uuid' },
  dateTime: { type: 'string', format: 'date-time' },
  anyOf: {
    anyOf: [
      { type: 'object', properties: { cat: { type: 'string', maxLength: 8 } }, required: ['cat'], additionalProperties: false },
      { type: 'integer', minimum: 0, maximum: 9 },
    ],
  },
  oneOf: {
    oneOf: [
      { type: 'object', properties: { kind: { const: 'a' }, x: { type: 'integer' } }, required: ['kind', 'x'], additionalProperties: false },
      { type: 'object', properties: { kind: { const: 'b' }, y: { type: 'boolean' } }, required: ['kind', 'y'], additionalProperties: false },
    ],
  },
  allOf: {
    allOf: [
      { type: 'object', properties: { id: { type: 'integer', minimum: 1, maximum: 99 } }, required: ['id'] },
      { type: 'object', properties: { tag: { type: 'string', maxLength: 6 } }, required: ['tag'] },
    ],
  },
  refs: {
    $defs: {
      point: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'], additionalProperties: false },
    },
    type: 'object',
    properties: { from: { $ref: '#/$defs/point' }, to: { $ref: '#/$defs/point' } },
    required: ['from', 'to'],
    additionalProperties: false,
  },
  recursiveTree: {
    $defs: {
      node: {
        type: 'object',
        properties: {
          label: { type: 'string', maxLength: 6 },
          children: { type: 'array', maxItems: 2, items: { $ref: '#/$defs/node' } },
        },
        required: ['label'],
        additionalProperties: false,
      },
    },
    $ref: '#/$defs/node',
  },
  additionalSchema: {
    type: 'object',
    properties: { title: { type: 'string', maxLength: 12 } },
    required: ['title'],
    additionalProperties: { type: 'integer' },
  },
  nested: {
    type: 'object',
    properties: {
      table: {
        type: 'array', minItems: 1, maxItems: 2,
        items: { type: 'array', minItems: 2, maxItems: 2, items: { type: 'string', maxLength: 6 } },
      },
      ok: { type: 'boolean' },
    },
    required: ['table', 'ok'],
    additionalProperties: false,
  },
  stringLengths: { type: 'string', minLength: 3, maxLength: 5 },
};

async function answer(request, stream) {
  if (!stream) {
    const completion = await client.chat.completions.create(request);
    return { choice: completion.choices[0], usage: completion.usage };
  }
  const chunks = await client.chat.completions.create({ ...request, stream: true });
  let content = '';
  let finish = null;
  const calls = [];
  for await (const chunk of chunks) {
    const choice = chunk.choices[0];
    if (!choice) continue;
    content += choice.delta.content ?? '';
    for (const call of choice.delta.tool_calls ?? []) {
      calls[call.index] ??= { id: call.id, type: call.type, function: { name: '', arguments: '' } };
      calls[call.index].function.name += call.function?.name ?? '';
      calls[call.index].function.arguments += call.function?.arguments ?? '';
    }
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  const message = { content, tool_calls: calls.length ? calls : undefined };
  return { choice: { message, finish_reason: finish } };
}

function request(extra, seed) {
  const { request: base } = loadCase(seed % 2 ? '02_one_image_jpeg' : '01_text_only');
  return { ...base, max_tokens: 160, temperature: 1, seed, ...extra };
}

for (const [name, schema] of Object.entries(schemas)) {
  test(`json_schema ${name}: every answer parses and validates`, async () => {
    const validate = ajv.compile(schema);
    for (const seed of [1, 2, 3]) {
      for (const stream of [false, true]) {
        const { choice } = await answer(request({
          response_format: { type: 'json_schema', json_schema: { name, schema, strict: true } },
        }, seed), stream);
        const text = choice.message.content;
        let value;
        assert.doesNotThrow(() => { value = JSON.parse(text); }, `seed ${seed}: ${text}`);
        assert.ok(validate(value), `seed ${seed} stream ${stream}: ${text}\n${ajv.errorsText(validate.errors)}`);
        assert.ok(['stop', 'length'].includes(choice.finish_reason));
      }
    }
  });
}

test('json_object answers are JSON objects', async () => {
  for (const seed of [4, 5, 6]) {
    for (const stream of [false, true]) {
      const { choice } = await answer(request({ response_format: { type: 'json_object' } }, seed), stream);
      const value = JSON.parse(choice.message.content);
      assert.equal(typeof value, 'object');
      assert.ok(value !== null && !Array.isArray(value), choice.message.content);
    }
  }
});

test('a schema keyword qvl cannot honour is a 400 naming it', async () => {
  await assert.rejects(client.chat.completions.create(request({
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'x', schema: { type: 'object', properties: { a: { type: 'string', format: 'hostname-ish' } } } },
    },
  }, 1)), (e) => e instanceof OpenAI.BadRequestError &&
    e.param === 'response_format.json_schema.schema.properties.a.format');
});

const weather = {
  type: 'function',
  function: {
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
  },
};
const time = {
  type: 'function',
  function: {
    name: 'get_time',
    parameters: { type: 'object', properties: { zone: { type: 'string', maxLength: 12 } }, required: ['zone'] },
  },
};

function checkCalls(message, names) {
  assert.ok(message.tool_calls?.length >= 1, JSON.stringify(message));
  for (const call of message.tool_calls) {
    assert.equal(call.type, 'function');
    assert.match(call.id, /^call_/);
    assert.ok(names.includes(call.function.name), call.function.name);
    const tool = [weather, time].find((t) => t.function.name === call.function.name);
    const args = JSON.parse(call.function.arguments);
    const validate = ajv.compile(tool.function.parameters);
    assert.ok(validate(args), `${call.function.arguments}: ${ajv.errorsText(validate.errors)}`);
  }
}

test('tool_choice required gives valid tool calls, streamed and not', async () => {
  for (const seed of [1, 2, 3]) {
    for (const stream of [false, true]) {
      const { choice } = await answer(request({ tools: [weather, time], tool_choice: 'required' }, seed), stream);
      assert.equal(choice.finish_reason, 'tool_calls');
      checkCalls(choice.message, ['get_weather', 'get_time']);
    }
  }
});

test('a named tool_choice calls that tool once', async () => {
  for (const seed of [7, 8]) {
    const { choice } = await answer(request({
      tools: [weather, time], tool_choice: { type: 'function', function: { name: 'get_time' } },
    }, seed), false);
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.tool_calls.length, 1);
    checkCalls(choice.message, ['get_time']);
  }
});

test('a tool result goes back through the template and the model answers', async () => {
  const asked = request({ tools: [weather], tool_choice: 'required' }, 3);
  const first = await client.chat.completions.create(asked);
  const call = first.choices[0].message.tool_calls[0];
  const followUp = await client.chat.completions.create({
    ...asked,
    tool_choice: 'auto',
    max_tokens: 8,
    messages: [
      ...asked.messages,
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: call.id, content: '{"temperature": 21}' },
    ],
  });
  // The call and its result are in the prompt (the arguments as the parser re-wrote them,
  // so not the model's own tokens), and the prefix of the first request (system turn with
  // the tools, the question) came from the cache.
  assert.ok(followUp.usage.prompt_tokens > first.usage.prompt_tokens + 10);
  assert.ok(followUp.usage.prompt_tokens_details.cached_tokens > 0);
  assert.ok(['stop', 'length', 'tool_calls'].includes(followUp.choices[0].finish_reason));
});

test('n answers share one prompt and each validates', async () => {
  const completion = await client.chat.completions.create(request({
    n: 3, response_format: { type: 'json_schema', json_schema: { name: 'person', schema: schemas.person } },
  }, 11));
  assert.equal(completion.choices.length, 3);
  const validate = ajv.compile(schemas.person);
  for (const [i, choice] of completion.choices.entries()) {
    assert.equal(choice.index, i);
    assert.ok(validate(JSON.parse(choice.message.content)), choice.message.content);
  }
});
