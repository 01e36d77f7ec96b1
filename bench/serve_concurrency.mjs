#!/usr/bin/env node
// Server benchmark: time to first token and aggregate decode speed for 1, 4 and 8
// concurrent streamed image requests (a different image each, same prompt, N tokens with
// EOS ignored, greedy), against `qvl serve` and, when a llama.cpp build is given, against
// llama-server on the same model, one server at a time.
//
//   node bench/serve_concurrency.mjs --model DIR [--qvl build/qvl] [--dtype q8]
//       [--llama-cpp DIR --gguf TEXT.gguf --mmproj MMPROJ.gguf] [--levels 1,4,8]
//       [--tokens 64] [--image bench/bench-1024x768.jpg] [--threads 2] [--out FILE.json]
//       [--decode-tokens 256 --decode-level 4] [--beside-tokens 400 --beside-level 3]
//       [--qvl-args "--max-stall-ms 1000"]
//
// The images are colour variants of --image (channel orders, mirrored, flipped), written
// with Pillow (python3-pil); every request of the run gets one of its own, so that no
// server can reuse an encoding or a cached prefix from an earlier request.
// Per level it reports: each request's time to first token (first, median, last), the
// wall time until the last token, aggregate decode (all generated tokens divided by the
// time from the first first-token to the last token, which includes other requests'
// image encodes) and the decode rate once every request streams (tokens after the last
// first-token up to the first request done, divided by that window; "—" when some request
// is done before the last one starts).
// It also reports the longest pause between two streamed pieces of any answer.
// --decode-tokens N adds one run of --decode-level requests with N tokens each, long
// enough that they all stream together on any server: its batched decode rate is the
// figure to compare between servers that schedule differently.
// --beside-tokens N adds one run in which a text-only answer of N tokens streams and, from
// its first token on, --beside-level image requests arrive: the longest pause in that
// answer while the images are encoded and prefilled (qvl bounds it with --max-stall-ms)
// and the image requests' first tokens, counted from their submission.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function parseArgs(argv) {
  const options = {
    qvl: 'build/qvl',
    dtype: 'q8',
    levels: '1,4,8',
    tokens: 64,
    image: 'bench/bench-1024x768.jpg',
    threads: 2,
    prompt: 'Describe this image.',
    decodeTokens: 0,
    decodeLevel: 4,
    besideTokens: 0,
    besideLevel: 3,
    besidePrompt: 'Write a long story about a lighthouse keeper.',
    qvlArgs: '',
  };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '').replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (!(key in options) && !['model', 'llamaCpp', 'gguf', 'mmproj', 'out'].includes(key)) {
      throw new Error(`unknown option ${argv[i]}`);
    }
    options[key] = argv[i + 1];
  }
  if (!options.model) throw new Error('--model DIR is required');
  options.levels = String(options.levels).split(',').map(Number).filter((n) => n > 0);
  options.tokens = Number(options.tokens);
  options.decodeTokens = Number(options.decodeTokens);
  options.decodeLevel = Number(options.decodeLevel);
  options.besideTokens = Number(options.besideTokens);
  options.besideLevel = Number(options.besideLevel);
  return options;
}

function writeVariants(image, count) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qvl-bench-'));
  const script = `
import sys, itertools
from PIL import Image, ImageOps
src = Image.open(sys.argv[1]).convert('RGB')
orders = list(itertools.permutations(range(3)))
for i in range(int(sys.argv[3])):
    bands = src.split()
    img = Image.merge('RGB', [bands[c] for c in orders[i % 6]])
    if (i // 6) % 2: img = ImageOps.mirror(img)
    if (i // 12) % 2: img = ImageOps.flip(img)
    img.save(f'{sys.argv[2]}/image-{i}.jpg', quality=90)
`;
  execFileSync(fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3', ['-c', script, image, dir, String(count)]);
  return Array.from({ length: count }, (_, i) => {
    const bytes = fs.readFileSync(path.join(dir, `image-${i}.jpg`));
    return `data:image/jpeg;base64,${bytes.toString('base64')}`;
  });
}

async function waitHealthy(base, child) {
  for (let i = 0; i < 3000; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      const r = await fetch(`${base}/health`);
      if (r.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((res) => setTimeout(res, 200));
  }
  throw new Error('server never became healthy');
}

// One streamed request (text only when imageUrl is null); times are milliseconds since
// `t0`. options.onFirst, if given, is called at the first piece of the answer.
async function streamOne(base, model, imageUrl, options, t0) {
  const content = imageUrl
    ? [
        { type: 'image_url', image_url: { url: imageUrl } },
        { type: 'text', text: options.prompt },
      ]
    : options.prompt;
  const body = {
    model,
    stream: true,
    max_tokens: options.tokens,
    temperature: 0,
    ignore_eos: true,
    messages: [{ role: 'user', content }],
  };
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  const decoder = new TextDecoder();
  let buffer = '';
  let first = null;
  let pieces = 0;
  const times = [];
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, end).trim();
      buffer = buffer.slice(end + 1);
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      const event = JSON.parse(line.slice(6));
      const delta = event.choices?.[0]?.delta?.content;
      if (delta) {
        pieces++;
        times.push(performance.now() - t0);
        if (first === null) {
          first = times[0];
          options.onFirst?.();
        }
      }
    }
  }
  return { ttft: first, end: performance.now() - t0, pieces, times };
}

function longestPause(times) {
  return Math.max(0, ...times.slice(1).map((t, i) => t - times[i])) / 1000;
}

async function runLevel(base, model, images, level, options) {
  const t0 = performance.now();
  const results = await Promise.all(
    Array.from({ length: level }, () => streamOne(base, model, images.shift(), options, t0)),
  );
  const ttfts = results.map((r) => r.ttft).sort((a, b) => a - b);
  const lastEnd = Math.max(...results.map((r) => r.end));
  const tokens = level * options.tokens;
  // While every request streams (from the last first token to the first request done),
  // all of them decode together: the batched decode rate. A server that starts streaming
  // early may finish some requests before the last one starts; then there is no window.
  const lastTtft = ttfts[ttfts.length - 1];
  const firstDone = Math.min(...results.map((r) => r.times[r.times.length - 1]));
  const together = results.reduce(
    (n, r) => n + r.times.filter((t) => t > lastTtft && t <= firstDone).length,
    0,
  );
  const window = (firstDone - lastTtft) / 1000;
  return {
    level,
    ttft_first_s: ttfts[0] / 1000,
    ttft_median_s: ttfts[Math.floor(ttfts.length / 2)] / 1000,
    ttft_last_s: ttfts[ttfts.length - 1] / 1000,
    total_s: lastEnd / 1000,
    aggregate_decode_tps: tokens / ((lastEnd - ttfts[0]) / 1000),
    all_streaming_decode_tps: level > 1 && together >= level ? together / window : null,
    longest_pause_s: Math.max(...results.map((r) => longestPause(r.times))),
    streamed_pieces: results.map((r) => r.pieces),
  };
}

async function runBeside(base, model, images, options) {
  const t0 = performance.now();
  let started;
  const firstPiece = new Promise((res) => (started = res));
  const text = streamOne(
    base,
    model,
    null,
    { ...options, prompt: options.besidePrompt, tokens: options.besideTokens, onFirst: started },
    t0,
  );
  await firstPiece;
  const submitted = performance.now() - t0;
  const imageRuns = await Promise.all(
    Array.from({ length: options.besideLevel }, () =>
      streamOne(base, model, images.shift(), options, t0),
    ),
  );
  const answer = await text;
  return {
    beside_level: options.besideLevel,
    stream_tokens: answer.pieces,
    stream_longest_pause_s: longestPause(answer.times),
    image_ttft_s: imageRuns.map((r) => (r.ttft - submitted) / 1000).sort((a, b) => a - b),
  };
}

async function benchServer(name, command, args, port, allImages, options) {
  const [warmUpImage, ...images] = allImages;
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d) => {
    log = (log + d).slice(-4000);
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitHealthy(base, child);
    const model = (await (await fetch(`${base}/v1/models`)).json()).data[0].id;
    // Warm-up: one request on an image the timed runs do not use.
    await streamOne(base, model, warmUpImage, { ...options, tokens: 4 }, 0);
    const rows = [];
    for (const level of options.levels) {
      const row = await runLevel(base, model, images, level, options);
      console.error(`${name}: ${JSON.stringify(row)}`);
      rows.push({ server: name, ...row });
    }
    if (options.decodeTokens > 0) {
      const decodeOptions = { ...options, tokens: options.decodeTokens };
      const row = await runLevel(base, model, images, options.decodeLevel, decodeOptions);
      console.error(`${name} (${options.decodeTokens} tokens): ${JSON.stringify(row)}`);
      rows.push({ server: name, tokens: options.decodeTokens, ...row });
    }
    if (options.besideTokens > 0) {
      const beside = await runBeside(base, model, images, options);
      console.error(`${name} (beside a streaming answer): ${JSON.stringify(beside)}`);
      besideRows.push({ server: name, ...beside });
    }
    return rows;
  } catch (e) {
    throw new Error(`${name}: ${e.message}\n${log}`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((res) => child.on('exit', res));
  }
}

const options = parseArgs(process.argv.slice(2));
const maxLevel = Math.max(
  ...options.levels,
  options.decodeTokens > 0 ? options.decodeLevel : 0,
  options.besideTokens > 0 ? options.besideLevel + 1 : 0,
);
const requests =
  options.levels.reduce((a, b) => a + b, 0) +
  (options.decodeTokens > 0 ? options.decodeLevel : 0) +
  (options.besideTokens > 0 ? options.besideLevel : 0);
const images = writeVariants(options.image, 1 + requests);
if (images.length > 24) throw new Error('at most 23 requests in all (24 image variants)');
const rows = [];
const besideRows = [];
const qvlArgs = ['serve', '-m', options.model, '--dtype', options.dtype, '--vision-dtype',
  options.dtype, '-t', String(options.threads), '--port', '18531', '--parallel',
  String(maxLevel), '--no-download', ...options.qvlArgs.split(' ').filter((a) => a)];
rows.push(...(await benchServer('qvl', options.qvl, qvlArgs, 18531, images, options)));
if (options.llamaCpp) {
  const server = path.join(options.llamaCpp, 'build/bin/llama-server');
  const slotContext = 1024 + Math.max(options.tokens, options.decodeTokens);
  const llamaArgs = ['-m', options.gguf, '--mmproj', options.mmproj, '-t', String(options.threads),
    '-np', String(maxLevel), '-c', String(slotContext * maxLevel), '--port', '18532', '--host',
    '127.0.0.1', '--temp', '0'];
  rows.push(...(await benchServer('llama-server', server, llamaArgs, 18532, images, options)));
}

const lines = [];
if (rows.length > 0) {
  lines.push(
    '| server | concurrent | tokens each | TTFT first (s) | TTFT median (s) | TTFT last (s) | total (s) | aggregate decode (tok/s) | decode, all streaming (tok/s) | longest pause (s) |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.server} | ${r.level} | ${r.tokens ?? options.tokens} | ${r.ttft_first_s.toFixed(1)} | ${r.ttft_median_s.toFixed(1)} | ` +
        `${r.ttft_last_s.toFixed(1)} | ${r.total_s.toFixed(1)} | ${r.aggregate_decode_tps.toFixed(1)} | ` +
        `${r.all_streaming_decode_tps !== null ? r.all_streaming_decode_tps.toFixed(1) : '—'} | ` +
        `${r.longest_pause_s.toFixed(1)} |`,
    ),
  );
}
if (besideRows.length > 0) {
  lines.push(
    ...(lines.length > 0 ? [''] : []),
    '| server | image requests beside the answer | answer tokens | longest pause in the answer (s) | image first tokens after submission (s) |',
    '|---|---|---|---|---|',
    ...besideRows.map(
      (r) =>
        `| ${r.server} | ${r.beside_level} | ${r.stream_tokens} | ${r.stream_longest_pause_s.toFixed(2)} | ` +
        `${r.image_ttft_s.map((t) => t.toFixed(1)).join(', ')} |`,
    ),
  );
}
console.log(lines.join('\n'));
if (options.out) {
  fs.writeFileSync(options.out, JSON.stringify({ options, rows, beside: besideRows }, null, 2));
}
