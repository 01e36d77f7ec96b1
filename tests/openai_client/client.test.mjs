// The official `openai` npm client against `qvl serve` with the tiny fixture model:
// image requests as data URLs, streamed and not, must give the golden greedy answers,
// and errors must surface as the client's typed errors.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';

const binary = process.env.QVL_BINARY;
const data = process.env.QVL_TEST_DATA;
const cases = path.join(data, 'tiny-qwen3vl', 'cases');
let server;
let client;

function dataUrl(file) {
  const type = file.endsWith('.png') ? 'png' : 'jpeg';
  return `data:image/${type};base64,${readFileSync(file).toString('base64')}`;
}

function loadCase(name) {
  const dir = path.join(cases, name);
  const request = JSON.parse(readFileSync(path.join(dir, 'request.json'), 'utf8'));
  for (const message of request.messages) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content) {
      if (part.type === 'image_url') part.image_url.url = dataUrl(path.join(dir, part.image_url.url));
    }
  }
  const meta = JSON.parse(readFileSync(path.join(dir, 'meta.json'), 'utf8'));
  return { request, meta };
}

// Starts `qvl serve` on a free port; resolves with the base URL once /health says 200.
// Prompts go in 32-token chunks with no stall allowed: answers must not depend on the
// schedule.
function startServer() {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, [
      'serve', '-m', path.join(data, 'tiny-qwen3vl', 'model'), '--port', '0',
      '--model-alias', 'qwen3-vl', '--dtype', 'f32', '--weight-cache', 'none',
      '--api-key', 'test-key', '--threads', '2', '--prefill-chunk', '32', '--max-stall-ms', '0',
    ], { stdio: ['ignore', 'inherit', 'pipe'] });
    let log = '';
    child.on('exit', (code) => reject(new Error(`qvl serve exited with ${code}:\n${log}`)));
    child.stderr.on('data', async (chunk) => {
      log += chunk;
      process.stderr.write(chunk);
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(log);
      if (!match || child.baseUrl) return;
      child.baseUrl = match[1];
      for (let i = 0; i < 600; i++) {
        try {
          const health = await fetch(`${child.baseUrl}/health`);
          if (health.status === 200) return resolve(child);
        } catch { /* not up yet */ }
        await new Promise((r) => setTimeout(r, 100));
      }
      reject(new Error('qvl serve never became healthy'));
    });
  });
}

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
  await assert.rejects(client.completions.create({ ...body, echo: true }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'echo');
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

test('SIGTERM lets the stream in flight finish, then exits 0', async () => {
  server.removeAllListeners('exit');
  const exited = new Promise((resolve) => server.on('exit', (code) => resolve(code)));
  const stream = await client.chat.completions.create({
    messages: [{ role: 'user', content: 'count' }], max_tokens: 200, ignore_eos: true,
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
  assert.equal(usage.completion_tokens, 200);
  assert.equal(await exited, 0);
  server = null;
});
