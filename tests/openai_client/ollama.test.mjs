// Ollama's API through the official `ollama` npm client against `qvl serve` on the tiny
// fixture model: the fixture cases Ollama's message shape can hold (images before the
// text) must give the golden greedy answers, streamed and not, through /api/chat and
// /api/generate; structured output must validate; the model listings must describe the
// served model; errors must reach the client as its ResponseError.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Ollama } from 'ollama';
import Ajv2020 from 'ajv/dist/2020.js';
import { loadCase, startServer } from './qvl_server.mjs';

let server;
let client;
const ajv = new Ajv2020({ strict: false, allErrors: true });

before(async () => {
  server = await startServer();
  client = new Ollama({ host: server.baseUrl, headers: { Authorization: 'Bearer test-key' } });
});

after(async () => {
  if (server) server.kill('SIGKILL');
});

// A fixture's chat messages as Ollama messages: a message's images (base64, no data:
// prefix) and its text.
function ollamaMessages(messages) {
  return messages.map(({ role, content }) => {
    if (typeof content === 'string') return { role, content };
    const images = content.filter((p) => p.type === 'image_url')
      .map((p) => p.image_url.url.replace(/^data:[^,]*,/, ''));
    const text = content.filter((p) => p.type === 'text').map((p) => p.text).join('');
    return { role, content: text, images };
  });
}

function chatRequest(name) {
  const { request, meta } = loadCase(name);
  return {
    body: {
      model: request.model, messages: ollamaMessages(request.messages),
      options: { num_predict: request.max_tokens, temperature: 0 },
    },
    meta,
  };
}

function checkFinal(final, meta) {
  assert.equal(final.done, true);
  assert.equal(final.done_reason, 'length');
  assert.equal(final.prompt_eval_count, meta.num_prompt_tokens);
  assert.equal(final.eval_count, 16);
  assert.ok(final.total_duration > 0 && final.eval_duration > 0, JSON.stringify(final));
}

for (const name of ['01_text_only', '02_one_image_jpeg', '04_two_turns', '05_tall_and_tiny']) {
  test(`chat on ${name} gives the golden answer, streamed and not`, async () => {
    const { body, meta } = chatRequest(name);
    const reply = await client.chat(body);
    assert.equal(reply.model, 'qwen3-vl');
    assert.equal(reply.message.role, 'assistant');
    assert.equal(reply.message.content, meta.greedy_text);
    checkFinal(reply, meta);

    let text = '';
    let last = null;
    for await (const part of await client.chat({ ...body, stream: true })) {
      text += part.message.content;
      last = part;
    }
    assert.equal(text, meta.greedy_text);
    checkFinal(last, meta);
  });
}

test('generate with an image gives the chat answer; raw gives the template as sent', async () => {
  const { body, meta } = chatRequest('02_one_image_jpeg');
  const [message] = body.messages;
  const reply = await client.generate({
    model: body.model, prompt: message.content, images: message.images, options: body.options,
  });
  assert.equal(reply.response, meta.greedy_text);
  checkFinal(reply, meta);

  const text = loadCase('01_text_only');
  let streamed = '';
  for await (const part of await client.generate({
    model: 'qwen3-vl', prompt: text.meta.prompt_text, raw: true, stream: true,
    options: { num_predict: 16, temperature: 0 },
  })) streamed += part.response;
  assert.equal(streamed, text.meta.greedy_text);
});

test('format with a JSON schema gives answers that validate', async () => {
  const schema = {
    type: 'object',
    properties: { name: { type: 'string', maxLength: 20 }, age: { type: 'integer', minimum: 0 } },
    required: ['name', 'age'],
    additionalProperties: false,
  };
  const validate = ajv.compile(schema);
  for (const seed of [1, 2]) {
    const reply = await client.chat({
      model: 'qwen3-vl', messages: [{ role: 'user', content: 'Who is it?' }], format: schema,
      options: { num_predict: 120, temperature: 1, seed },
    });
    assert.ok(validate(JSON.parse(reply.message.content)), reply.message.content);
  }
  const json = await client.generate({
    model: 'qwen3-vl', prompt: 'Give JSON.', format: 'json', options: { num_predict: 60, seed: 3 },
  });
  assert.equal(typeof JSON.parse(json.response), 'object');
});

test('a tool call and its result in the history are answered', async () => {
  const reply = await client.chat({
    model: 'qwen3-vl',
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
      { role: 'tool', content: '{"temperature": 21}', tool_name: 'get_weather' },
    ],
    tools: [{
      type: 'function',
      function: {
        name: 'get_weather', description: 'Current weather of a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    }],
    options: { num_predict: 4, temperature: 0 },
  });
  assert.equal(reply.done, true);
  assert.ok(reply.prompt_eval_count > 40, JSON.stringify(reply));
});

test('embed gives one unit vector per input, the same for the same text', async () => {
  const texts = ['A cat sat on the mat.', 'A dog ran in the park.', 'A cat sat on the mat.'];
  const res = await client.embed({ model: 'qwen3-vl', input: texts });
  assert.equal(res.model, 'qwen3-vl');
  assert.equal(res.embeddings.length, 3);
  assert.ok(res.prompt_eval_count > 0);
  for (const e of res.embeddings) assert.ok(Math.abs(Math.hypot(...e) - 1) < 1e-5);
  const apart = (a, b) => Math.max(...a.map((x, i) => Math.abs(x - b[i])));
  assert.ok(apart(res.embeddings[2], res.embeddings[0]) < 1e-5);
  assert.ok(apart(res.embeddings[1], res.embeddings[0]) > 1e-3);
});

test('the listings describe the served model', async () => {
  const { models } = await client.list();
  assert.deepEqual(models.map((m) => m.name), ['model', 'qwen3-vl']);
  for (const m of models) {
    assert.ok(m.size > 0);
    assert.equal(m.details.family, 'qwen3vl');
  }
  const running = await client.ps();
  assert.deepEqual(running.models.map((m) => m.name), ['model', 'qwen3-vl']);
  const shown = await client.show({ model: 'qwen3-vl:latest' });
  assert.ok(shown.capabilities.includes('vision'));
  assert.ok(shown.template.includes('<|im_start|>'));
  const { version } = await client.version();
  assert.match(version, /^\d+\.\d+\.\d+$/);
});

test('errors arrive as the client\'s ResponseError with Ollama\'s message', async () => {
  await assert.rejects(client.chat({ model: 'llama3', messages: [{ role: 'user', content: 'hi' }] }),
    (e) => e.status_code === 404 && e.error.includes('llama3'));
  await assert.rejects(client.chat({
    model: 'qwen3-vl', messages: [{ role: 'user', content: 'hi' }], options: { temperature: 9 },
  }), (e) => e.status_code === 400 && e.error.startsWith('options.temperature: '));
  await assert.rejects(client.show({ model: 'llama3' }), (e) => e.status_code === 404);
  const anonymous = new Ollama({ host: server.baseUrl });
  await assert.rejects(anonymous.chat({ model: 'qwen3-vl', messages: [{ role: 'user', content: 'hi' }] }),
    (e) => e.status_code === 401);
});
