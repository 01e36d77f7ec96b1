// The official `openai` npm client against `qvl serve` with the tiny fixture model:
// image requests as data URLs, streamed and not, must give the golden greedy answers,
// and errors must surface as the client's typed errors.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { loadCase, startServer } from './qvl_server.mjs';

let server;
let client;

before(async () => {
  server = await startServer();
  client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: 'test-key', maxRetries: 0 });
});

after(async () => {
  if (server) server.kill('SIGKILL');
});

test('models lists the served model and its alias', async () => {
  const ids = [];
  for await (const model of client.models.list()) ids.push(model.id);
  assert.deepEqual(ids, ['model', 'qwen3-vl']);
});

test('models.retrieve finds the id and its alias, and 404s anything else', async () => {
  for (const id of ['model', 'qwen3-vl']) {
    const model = await client.models.retrieve(id);
    assert.equal(model.id, id);
    assert.equal(model.object, 'model');
  }
  await assert.rejects(client.models.retrieve('Qwen/Qwen3-VL-2B-Instruct'),
    (e) => e instanceof OpenAI.NotFoundError && e.param === 'model');
});

test('embeddings.create: the base64 the client asks for by default, floats, dimensions', async () => {
  const texts = ['A cat sat on the mat.', 'A dog ran in the park.'];
  const encoded = await client.embeddings.create({ model: 'qwen3-vl', input: texts });
  const floats = await client.embeddings.create({
    model: 'qwen3-vl', input: texts, encoding_format: 'float',
  });
  assert.equal(encoded.object, 'list');
  assert.equal(encoded.model, 'qwen3-vl');
  assert.equal(encoded.data.length, 2);
  for (let i = 0; i < 2; i++) {
    assert.equal(encoded.data[i].index, i);
    // The client decodes the base64 into float32 values; the float form writes each with
    // the fewest digits that read back as the same float32.
    assert.deepEqual(encoded.data[i].embedding, floats.data[i].embedding.map(Math.fround));
    assert.ok(Math.abs(Math.hypot(...floats.data[i].embedding) - 1) < 1e-5);
  }
  assert.ok(encoded.usage.prompt_tokens > 0);
  assert.equal(encoded.usage.total_tokens, encoded.usage.prompt_tokens);
  const cut = await client.embeddings.create({
    model: 'qwen3-vl', input: texts[0], dimensions: 4, encoding_format: 'float',
  });
  assert.equal(cut.data[0].embedding.length, 4);
  await assert.rejects(client.embeddings.create({ model: 'qwen3-vl', input: '' }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'input');
});

test('completions.create on the rendered template gives the chat answer', async () => {
  const { request, meta } = loadCase('01_text_only');
  const body = {
    model: 'qwen3-vl', prompt: meta.prompt_text, max_tokens: request.max_tokens,
    temperature: 0,
  };
  const completion = await client.completions.create(body);
  assert.equal(completion.object, 'text_completion');
  assert.equal(completion.choices[0].text, meta.greedy_text);
  assert.equal(completion.usage.prompt_tokens, meta.num_prompt_tokens);

  const stream = await client.completions.create({
    ...body, stream: true, stream_options: { include_usage: true }, logprobs: 2,
  });
  let text = '';
  let usage = null;
  let tokens = 0;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    text += choice.text;
    tokens += choice.logprobs?.tokens.length ?? 0;
  }
  assert.equal(text, meta.greedy_text);
  assert.equal(usage.prompt_tokens, meta.num_prompt_tokens);
  assert.equal(tokens, usage.completion_tokens);
  await assert.rejects(client.completions.create({ ...body, suffix: 'end' }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'suffix');
});

test('completions.create with several prompts, n and echo, as the legacy API has them', async () => {
  const { meta } = loadCase('01_text_only');
  const prompts = [meta.prompt_text, 'The sky is'];
  const body = { model: 'qwen3-vl', max_tokens: 4, temperature: 0, n: 2 };
  const alone = [];
  for (const prompt of prompts) {
    alone.push((await client.completions.create({ ...body, n: 1, prompt })).choices[0].text);
  }
  const batch = await client.completions.create({ ...body, prompt: prompts, echo: true, logprobs: 1 });
  assert.equal(batch.choices.length, 4);
  batch.choices.forEach((choice, i) => {
    assert.equal(choice.index, i);
    const prompt = prompts[Math.floor(i / 2)];
    assert.equal(choice.text, prompt + alone[Math.floor(i / 2)]);
    // The prompt's tokens lead the lists, the first without a logprob.
    assert.equal(choice.logprobs.token_logprobs[0], null);
    assert.equal(choice.logprobs.tokens.join(''), choice.text);
  });
});

test('an image request gives the golden answer', async () => {
  const { request, meta } = loadCase('02_one_image_jpeg');
  const completion = await client.chat.completions.create(request);
  assert.equal(completion.choices[0].message.content, meta.greedy_text);
  assert.equal(completion.choices[0].finish_reason, 'length');
  assert.equal(completion.usage.prompt_tokens, meta.num_prompt_tokens);
  assert.equal(completion.usage.completion_tokens, 16);
  assert.equal(completion.timings.images[0].tokens, meta.images[0].num_image_tokens);
});

test('a streamed image request gives the golden answer', async () => {
  const { request, meta } = loadCase('03_two_images');
  const stream = await client.chat.completions.create({
    ...request, stream: true, stream_options: { include_usage: true },
  });
  let text = '';
  let finish = null;
  let usage = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    text += choice.delta.content ?? '';
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  assert.equal(text, meta.greedy_text);
  assert.equal(finish, 'length');
  assert.equal(usage.prompt_tokens, meta.num_prompt_tokens);
});

test('errors arrive as typed client errors', async () => {
  const { request } = loadCase('01_text_only');
  await assert.rejects(client.chat.completions.create({ ...request, model: 'gpt-4o' }),
    (e) => e instanceof OpenAI.NotFoundError && e.param === 'model');
  await assert.rejects(client.chat.completions.create({ ...request, temperature: 9 }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'temperature' &&
      e.message.includes('temperature: must be between 0 and 2, got 9'));
  const anonymous = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: 'wrong', maxRetries: 0 });
  await assert.rejects(anonymous.chat.completions.create(request),
    (e) => e instanceof OpenAI.AuthenticationError);
});

// 64 tokens fit the server's 10 s of grace even in the sanitizer build on a busy machine.
test('SIGTERM lets the stream in flight finish, then exits 0', async () => {
  server.removeAllListeners('exit');
  const exited = new Promise((resolve) => server.on('exit', (code) => resolve(code)));
  const stream = await client.chat.completions.create({
    messages: [{ role: 'user', content: 'count' }], max_tokens: 64, ignore_eos: true,
    temperature: 0, stream: true, stream_options: { include_usage: true },
  });
  let finish = null;
  let usage = null;
  let signalled = false;
  for await (const chunk of stream) {
    if (!signalled) {
      server.kill('SIGTERM');
      signalled = true;
    }
    if (chunk.usage) usage = chunk.usage;
    if (chunk.choices[0]?.finish_reason) finish = chunk.choices[0].finish_reason;
  }
  assert.equal(finish, 'length');
  assert.equal(usage.completion_tokens, 64);
  assert.equal(await exited, 0);
  server = null;
});
