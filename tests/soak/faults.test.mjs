// Faults around `qvl serve` and model loading, against the built binary: broken model
// files at start, a packed-weight cache that cannot be written, SIGTERM in the middle of
// a stream, and hostile connections (slow-loris, header floods, unauthenticated bodies).
// Run by ctest (tests/soak/CMakeLists.txt) with QVL_BINARY and QVL_TEST_DATA set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const binary = process.env.QVL_BINARY;
const data = process.env.QVL_TEST_DATA;
const model = path.join(data, 'tiny-qwen3vl', 'model');

// A scratch copy of the tiny model: links to every file but model.safetensors, which
// is given by `weights`.
function modelCopy(name, weights) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `qvl-faults-${name}-`));
  for (const file of fs.readdirSync(model)) {
    if (file !== 'model.safetensors') fs.symlinkSync(path.join(model, file), path.join(dir, file));
  }
  fs.writeFileSync(path.join(dir, 'model.safetensors'), weights);
  return dir;
}

// Starts `qvl serve ARGS` on a free port; resolves {child, port, log(), exited} once
// /health answers 200.
async function startServer(args) {
  const child = spawn(
    binary,
    ['serve', '-m', model, '--dtype', 'f32', '--weight-cache', 'none', '--port', '0', ...args],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const port = await new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      log += chunk;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
      if (m) resolve(Number(m[1]));
    });
    exited.then((e) => reject(new Error(`qvl serve exited early (${JSON.stringify(e)}):\n${log}`)));
  });
  for (let i = 0; i < 600; i++) {
    const r = await rawRequest(port, 'GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n', 5000);
    if (r.text.startsWith('HTTP/1.1 200')) return { child, port, exited, log: () => log };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`qvl serve never became healthy:\n${log}`);
}

// Runs `body(server)` against a fresh `qvl serve ARGS`, which is stopped (SIGTERM) after;
// resolves with how it exited. A server that does not stop in 30 s is killed.
async function withServer(args, body) {
  const server = await startServer(args);
  try {
    await body(server);
  } finally {
    server.child.kill('SIGTERM');
    const kill = setTimeout(() => server.child.kill('SIGKILL'), 30_000);
    await server.exited;
    clearTimeout(kill);
  }
  return server.exited;
}

// Sends `text` on a new connection; resolves with what came back before the server
// closed the connection or `waitMs` passed ({text, timedOut}).
function rawRequest(port, text, waitMs) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text: received, timedOut: true });
    }, waitMs);
    socket.on('data', (chunk) => {
      received += chunk;
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text: received, timedOut: false });
    });
    socket.on('error', () => {});
    socket.write(text);
  });
}

function runQvl(args, { fileSizeLimitKb } = {}) {
  // ulimit -f makes writes past the limit fail (EFBIG) as a full disk would; SIGXFSZ
  // is ignored so that qvl sees the error instead of being killed.
  const command = fileSizeLimitKb
    ? ['sh', ['-c', `trap '' XFSZ; ulimit -f ${fileSizeLimitKb}; exec "$@"`, 'sh', binary, ...args]]
    : [binary, args];
  const r = spawnSync(command[0], command[1], { encoding: 'utf8', timeout: 300_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test('a truncated model.safetensors is refused at start with one line naming it', async () => {
  const full = fs.readFileSync(path.join(model, 'model.safetensors'));
  const dir = modelCopy('truncated', full.subarray(0, full.length - 1000));
  const child = spawn(binary, ['serve', '-m', dir, '--port', '0', '--weight-cache', 'none'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (chunk) => {
    err += chunk;
  });
  const code = await new Promise((resolve) => child.on('exit', resolve));
  assert.equal(code, 1);
  assert.equal(
    err
      .split('\n')
      .filter((l) => l.startsWith('qvl: error: '))
      .join('\n'),
    `qvl: error: ${dir}/model.safetensors: tensor model.visual.pos_embed.weight: ` +
      'data_offsets [20968448, 20986880] point past the end of the file (the data section has ' +
      '20985880 bytes; truncated?)',
  );
  fs.rmSync(dir, { recursive: true });
});

test('a changed model file is refused at start with one line naming it', () => {
  const full = Buffer.from(fs.readFileSync(path.join(model, 'model.safetensors')));
  const headerEnd = 8 + Number(full.readBigUInt64LE(0));
  // Swap the first tensor's dtype for another of the same element size: the header
  // stays valid, the model does not.
  const at = full.subarray(0, headerEnd).indexOf('"BF16"');
  assert.ok(at > 0);
  full.write('"I16" ', at);
  const dir = modelCopy('changed', full);
  const r = runQvl(['run', '-m', dir, '--weight-cache', 'none', '-n', '1', '-q', 'hi']);
  assert.equal(r.code, 1);
  assert.equal(
    r.err,
    `qvl: error: ${dir}/model.safetensors: tensor ` +
      'model.language_model.embed_tokens.weight has dtype I16; qvl reads F32, BF16 or F16 weights ' +
      "(quantized ones as config.json's quantization_config describes)\n",
  );
  assert.equal(r.out, '');
  fs.rmSync(dir, { recursive: true });
});

test('a packed-weight cache that cannot be written leaves the old one usable', () => {
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'qvl-faults-cache-'));
  const ask = (dtype, limit) =>
    runQvl(
      [
        'run',
        '-m',
        model,
        '--dtype',
        dtype,
        '--weight-cache',
        cache,
        '-n',
        '8',
        '--temperature',
        '0',
        'Hello',
      ],
      { fileSizeLimitKb: limit },
    );
  const first = ask('q8');
  assert.equal(first.code, 0, first.err);
  const files = fs.readdirSync(cache);
  assert.equal(files.length, 1);
  const cached = path.join(cache, files[0]);
  const before = fs.readFileSync(cached);

  // The q4 cache is ~5 MiB; writing it stops at 1 MiB.
  const full = ask('q4', 1024);
  assert.equal(full.code, 0, full.err);
  assert.match(
    full.err,
    /cannot cache packed weights \(cannot write .*qvlw\.tmp-\d+: File too large\); packing in memory for this run/,
  );
  assert.ok(full.out.length > 0);
  assert.deepEqual(fs.readdirSync(cache), files, 'no temporary or partial file is left');
  assert.ok(fs.readFileSync(cached).equals(before), 'the old cache file is untouched');

  // Still under the limit: the old file is mapped, not rewritten, and answers the same.
  const again = ask('q8', 1024);
  assert.equal(again.code, 0, again.err);
  assert.doesNotMatch(again.err, /packing|cannot cache/);
  assert.equal(again.out, first.out);
  fs.rmSync(cache, { recursive: true });
});

test('SIGTERM during a stream ends it with a final chunk and exit 0', async () => {
  const server = await startServer(['--shutdown-grace', '1', '--ctx-size', '8192']);
  const kill = setTimeout(() => server.child.kill('SIGKILL'), 120_000);
  const body = JSON.stringify({
    messages: [{ role: 'user', content: 'Tell a long story' }],
    max_tokens: 6000,
    ignore_eos: true,
    stream: true,
  });
  const stream = await new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { 'Content-Type': 'application/json' },
      },
      (res) => {
        let text = '';
        let chunks = 0;
        res.on('data', (chunk) => {
          text += chunk;
          if (++chunks === 3) server.child.kill('SIGTERM');
        });
        res.on('end', () => resolve({ status: res.statusCode, text, ended: true }));
        res.on('error', (e) => resolve({ status: res.statusCode, text, ended: false, error: e.message }));
      },
    );
    req.on('error', (e) => resolve({ ended: false, error: e.message }));
    req.end(body);
  });
  assert.equal(stream.status, 200);
  assert.ok(stream.ended, `the stream was cut instead of ended: ${stream.error}`);
  const events = stream.text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice(6));
  assert.equal(events.at(-1), '[DONE]');
  const last = JSON.parse(events.at(-2));
  // Cut short by the shutdown: a finish_reason OpenAI clients know, and why in `error`.
  assert.equal(last.choices[0].finish_reason, 'length');
  assert.equal(last.error.message, 'the server shut down before the answer was complete');
  const exit = await server.exited;
  clearTimeout(kill);
  assert.deepEqual(exit, { code: 0, signal: null });
});

test('a slow-loris client cannot hold the HTTP threads', async () => {
  const exit = await withServer(['--http-threads', '4', '--timeout', '2'], async (server) => {
    // More connections than threads, each trickling a request head one byte a second:
    // no single read ever times out.
    const lorises = Array.from({ length: 8 }, () => {
      const socket = net.connect(server.port, '127.0.0.1');
      socket.on('error', () => {});
      const head = 'GET /health HTTP/1.1\r\nHost: t\r\nX-Slow: ' + 'x'.repeat(1000);
      let sent = 0;
      const timer = setInterval(() => {
        if (!socket.destroyed) socket.write(head[sent++ % head.length]);
      }, 1000);
      return { socket, timer };
    });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const health = await rawRequest(
      server.port,
      'GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n',
      20_000,
    );
    for (const l of lorises) {
      clearInterval(l.timer);
      l.socket.destroy();
    }
    assert.ok(
      health.text.startsWith('HTTP/1.1 200'),
      `/health during a slow-loris: ${JSON.stringify(health)}`,
    );
  });
  assert.equal(exit.code, 0);
});

test('a request head over the size limit is refused before it is buffered', async () => {
  const exit = await withServer([], async (server) => {
    const headers = Array.from({ length: 20000 }, (_, i) => `X-Flood-${i}: ${'v'.repeat(60)}`).join('\r\n');
    const r = await rawRequest(server.port, `GET /health HTTP/1.1\r\nHost: t\r\n${headers}\r\n\r\n`, 20_000);
    assert.match(r.text, /^HTTP\/1\.1 431 /);
  });
  assert.equal(exit.code, 0);
});

test('with an API key, an unauthenticated body is refused before it is read', async () => {
  const exit = await withServer(['--api-key', 'k3y', '--max-body-mb', '64'], async (server) => {
    // Announce 60 MB but send 1 KB: the 401 must come without waiting for the rest, and
    // the connection must end there.
    const head = 'POST /v1/chat/completions HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n';
    const r = await rawRequest(
      server.port,
      `${head}Content-Length: 60000000\r\n\r\n${'x'.repeat(1024)}`,
      20_000,
    );
    assert.match(r.text, /^HTTP\/1\.1 401 /);
    assert.match(r.text, /missing or wrong API key/);
    assert.equal(r.timedOut, false);
    const other = await rawRequest(
      server.port,
      `POST /v1/other HTTP/1.1\r\nHost: t\r\nContent-Length: 60000000\r\n\r\n{`,
      20_000,
    );
    assert.match(other.text, /^HTTP\/1\.1 404 /);
    assert.equal(other.timedOut, false);
  });
  assert.equal(exit.code, 0);
});
