// `qvl serve` on the tiny fixture model for the client tests, and the fixture cases as
// an OpenAI client sends them (images as data URLs).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const binary = process.env.QVL_BINARY;
const data = process.env.QVL_TEST_DATA;
const cases = path.join(data, 'tiny-qwen3vl', 'cases');

export function dataUrl(file) {
  const type = file.endsWith('.png') ? 'png' : 'jpeg';
  return `data:image/${type};base64,${readFileSync(file).toString('base64')}`;
}

export function loadCase(name) {
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
export function startServer() {
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

