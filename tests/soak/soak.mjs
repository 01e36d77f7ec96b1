#!/usr/bin/env node
// Soak and load test of `qvl serve` with the tiny fixture model on 127.0.0.1.
//
//   node tests/soak/soak.mjs --qvl build/qvl [--seconds 60] [--concurrency 6]
//                            [--data tests/data] [--report soak.json]
//
// Clients mix, for the given time: the fixture requests (greedy, streamed and not, images
// as data URLs), streams they abandon after the first chunk, malformed JSON, wrong
// types, broken, non-image and oversized images, oversized bodies, prompts over the
// context, unknown routes and bursts above the queue limit. It passes when the server
// never crashes, every answer is either the golden greedy text or the documented
// 4xx/503, RSS after the run is within 5 % of RSS after warm-up, no file descriptor is
// left open, /metrics counts what the clients counted, and SIGTERM stops it with exit 0.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const options = parseArgs(process.argv.slice(2), {
  qvl: path.join(here, '../../build/qvl'),
  data: path.join(here, '../data'),
  seconds: '60',
  concurrency: '6',
  report: '',
});
const seconds = Number(options.seconds);
const concurrency = Number(options.concurrency);
const modelDir = path.join(options.data, 'tiny-qwen3vl/model');
const casesDir = path.join(options.data, 'tiny-qwen3vl/cases');

// Small limits, so that every refusal path is reachable with small requests.
const serverArgs = [
  'serve',
  '-m',
  modelDir,
  '--dtype',
  'f32',
  '--weight-cache',
  'none',
  '--port',
  '0',
  '--model-alias',
  'qwen3-vl',
  '--parallel',
  '2',
  '--queue',
  '4',
  '--ctx-size',
  '1024',
  '--max-image-mb',
  '1',
  '--max-body-mb',
  '4',
  '--timeout',
  '5',
  '--shutdown-grace',
  '5',
];
const kRssTolerance = 0.05;
const kRequestTimeoutMs = 120_000;

function parseArgs(argv, defaults) {
  const out = { ...defaults };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in defaults) || i + 1 >= argv.length) {
      console.error(`soak: unknown or incomplete option ${argv[i]}`);
      process.exit(2);
    }
    out[key] = argv[i + 1];
  }
  return out;
}

// ---------------------------------------------------------------- fixture requests

function dataUrl(file) {
  const ext = path.extname(file).slice(1).toLowerCase();
  const type = ext === 'jpg' ? 'jpeg' : ext;
  return `data:image/${type};base64,${fs.readFileSync(file).toString('base64')}`;
}

function loadCases() {
  return fs
    .readdirSync(casesDir)
    .sort()
    .map((name) => {
      const dir = path.join(casesDir, name);
      const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
      const request = JSON.parse(fs.readFileSync(path.join(dir, 'request.json'), 'utf8'), (key, value) => {
        if (key === 'url' && typeof value === 'string' && !value.startsWith('data:')) {
          return dataUrl(path.join(dir, value));
        }
        // A video part's frames: every one a file of the case.
        if (key === 'video' && Array.isArray(value)) return value.map((f) => dataUrl(path.join(dir, f)));
        return value;
      });
      return { name, body: request, expected: meta.greedy_text };
    });
}

const cases = loadCases();
const photo = fs.readFileSync(path.join(casesDir, '02_one_image_jpeg/images/photo.jpg'));
const userWith = (content) => ({ model: 'qwen3-vl', max_tokens: 4, messages: [{ role: 'user', content }] });
const imagePart = (url) => [
  { type: 'image_url', image_url: { url } },
  { type: 'text', text: 'What is it?' },
];

// ---------------------------------------------------------------- HTTP

let port = 0;

// One request on its own connection. Resolves {status, body} or {error}; with
// `abandon`, destroys the connection after the first body chunk ({status, abandoned}).
function send(method, route, body, { abandon = false } = {}) {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const req = http.request({
      host: '127.0.0.1',
      port,
      method,
      path: route,
      agent: false,
      headers: {
        Connection: 'close',
        ...(payload !== undefined
          ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }
          : {}),
      },
    });
    const timer = setTimeout(() => {
      req.destroy();
      resolve({ error: 'timeout (hang?)' });
    }, kRequestTimeoutMs);
    req.on('response', (res) => {
      const chunks = [];
      res.on('data', (chunk) => {
        chunks.push(chunk);
        if (abandon && res.statusCode === 200) {
          clearTimeout(timer);
          req.destroy();
          resolve({ status: res.statusCode, abandoned: true });
        }
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() });
      });
      res.on('error', (e) => {
        clearTimeout(timer);
        resolve({ error: e.code || e.message });
      });
    });
    req.on('error', (e) => {
      clearTimeout(timer);
      resolve({ error: e.code || e.message });
    });
    req.end(payload);
  });
}

function streamedText(body) {
  let text = '';
  let done = false;
  for (const line of body.split('\n')) {
    if (!line.startsWith('data: ')) continue;
    const data = line.slice(6).trim();
    if (data === '[DONE]') {
      done = true;
      continue;
    }
    const event = JSON.parse(data);
    for (const choice of event.choices ?? []) text += choice.delta?.content ?? '';
  }
  return done ? text : null;
}

// ---------------------------------------------------------------- request kinds

// Each kind sends one request and says whether the answer is right. `route` is the
// label /metrics counts it under.
const chat = '/v1/chat/completions';

// A fixture case, streamed or not: a 200 must carry the case's greedy text.
function goldenKind(weight, stream) {
  return {
    weight,
    route: chat,
    async run() {
      const c = pick(cases);
      const r = await send('POST', chat, stream ? { ...c.body, stream: true } : c.body);
      if (r.status === 503) return r;
      let text;
      if (r.status === 200) {
        text = stream ? streamedText(r.body) : JSON.parse(r.body).choices[0].message.content;
      }
      return {
        ...r,
        ok: r.status === 200 && text === c.expected,
        why: `${c.name}: ${stream ? 'streamed' : 'got'} ${JSON.stringify(text)}`,
      };
    },
  };
}

const kinds = {
  golden: goldenKind(24, false),
  golden_stream: goldenKind(20, true),
  abandoned_stream: {
    weight: 10,
    route: chat,
    async run() {
      const c = pick(cases);
      const r = await send(
        'POST',
        chat,
        { ...c.body, stream: true, max_tokens: 64, ignore_eos: true },
        { abandon: true },
      );
      return { ...r, ok: r.status === 503 || r.abandoned === true };
    },
  },
  malformed_json: {
    weight: 8,
    route: chat,
    expect: [400],
    run: () => send('POST', chat, '{"messages": [{"role": "user", '),
  },
  wrong_type: {
    weight: 4,
    route: chat,
    expect: [400],
    run: () => send('POST', chat, { messages: 'hi', max_tokens: 'many' }),
  },
  broken_image: {
    weight: 6,
    route: chat,
    expect: [400],
    run: () =>
      send(
        'POST',
        chat,
        userWith(
          imagePart(`data:image/jpeg;base64,${photo.subarray(0, photo.length / 2).toString('base64')}`),
        ),
      ),
  },
  not_an_image: {
    weight: 3,
    route: chat,
    expect: [400],
    run: () =>
      send(
        'POST',
        chat,
        userWith(imagePart(`data:image/png;base64,${Buffer.from('not an image at all').toString('base64')}`)),
      ),
  },
  oversized_image: {
    weight: 4,
    route: chat,
    expect: [413],
    run: () =>
      send(
        'POST',
        chat,
        userWith(imagePart(`data:image/png;base64,${Buffer.alloc(1200 * 1024, 7).toString('base64')}`)),
      ),
  },
  // The server may answer 413 and hang up before the client has sent everything.
  oversized_body: {
    weight: 3,
    route: chat,
    expect: [413],
    resetMeans: 413,
    run: () => send('POST', chat, ' '.repeat(5 << 20)),
  },
  over_context: {
    weight: 5,
    route: chat,
    expect: [400],
    run: () => send('POST', chat, userWith(' 7'.repeat(1500))),
  },
  unknown_route: { weight: 2, route: 'other', expect: [404], run: () => send('GET', '/v2/nothing') },
  wrong_method: { weight: 1, route: chat, expect: [405], run: () => send('PUT', chat, '{}') },
  models: { weight: 2, route: '/v1/models', expect: [200], run: () => send('GET', '/v1/models') },
  burst: {
    weight: 3,
    route: chat,
    burst: 10,
    async run() {
      const c = pick(cases);
      const r = await send('POST', chat, { ...c.body, stream: true });
      if (r.status === 503) return r;
      return {
        ...r,
        ok: r.status === 200 && streamedText(r.body) === c.expected,
        why: `${c.name} in a burst`,
      };
    },
  },
};

const totalWeight = Object.values(kinds).reduce((s, k) => s + k.weight, 0);
function pick(list) {
  return list[Math.floor(Math.random() * list.length)];
}
function pickKind() {
  let x = Math.random() * totalWeight;
  for (const [name, kind] of Object.entries(kinds)) {
    x -= kind.weight;
    if (x < 0) return name;
  }
  return 'golden';
}

// ---------------------------------------------------------------- bookkeeping

const counts = {}; // kind -> status -> n
const routeCounts = {}; // "route code" -> n, as /metrics should count them
const failures = [];
let chat200 = 0; // chat responses the engine ran to the end or cancelled
let abandoned = 0; // streams the client closed before their end

function record(name, result) {
  const kind = kinds[name];
  const status = result.error
    ? kind.resetMeans && /ECONNRESET|EPIPE/.test(result.error)
      ? 'reset'
      : `error ${result.error}`
    : result.status;
  counts[name] ??= {};
  counts[name][status] = (counts[name][status] ?? 0) + 1;
  // The server records a stream its client left as 499 (unless it had ended first).
  const code = status === 'reset' ? kind.resetMeans : result.abandoned === true ? 499 : status;
  if (code === 499) abandoned++;
  if (typeof code === 'number')
    routeCounts[`${kind.route} ${code}`] = (routeCounts[`${kind.route} ${code}`] ?? 0) + 1;
  if (kind.route === chat && (code === 200 || code === 499)) chat200++;
  let ok;
  if (result.error) ok = status === 'reset';
  else if (kind.expect) ok = kind.expect.includes(result.status);
  else ok = result.ok ?? result.status === 503;
  if (!ok && failures.length < 20)
    failures.push({ kind: name, status, why: result.why ?? result.body?.slice(0, 300) });
}

async function runKind(name) {
  const kind = kinds[name];
  if (!kind.burst) return record(name, await kind.run());
  const results = await Promise.all(Array.from({ length: kind.burst }, () => kind.run()));
  for (const r of results) record(name, r);
}

const rssTimeline = []; // [seconds since start, RSS kB] every 10 s of load

async function load(durationMs, pid) {
  const end = Date.now() + durationMs;
  const sampler = setInterval(() => {
    try {
      rssTimeline.push([Math.round((Date.now() - started) / 1000), procStats(pid).rssKb]);
    } catch {
      /* exited */
    }
  }, 10_000);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) await runKind(pickKind());
    }),
  );
  clearInterval(sampler);
}

// ---------------------------------------------------------------- the server process

function procStats(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return { rssKb: Number(/VmRSS:\s+(\d+)/.exec(status)[1]), fds: fs.readdirSync(`/proc/${pid}/fd`).length };
}

async function metrics() {
  const r = await send('GET', '/metrics');
  const values = {};
  for (const line of r.body.split('\n')) {
    const m = /^([a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (m) values[m[1]] = Number(m[2]);
  }
  routeCounts['/metrics 200'] = (routeCounts['/metrics 200'] ?? 0) + 1;
  return values;
}

// Waits until nothing runs or waits in the engine and abandoned connections are gone.
async function idle(pid) {
  for (let i = 0; i < 600; i++) {
    const m = await metrics();
    if (m.qvl_active_sequences === 0 && m.qvl_queue_depth === 0) {
      await new Promise((r) => setTimeout(r, 1000));
      return procStats(pid);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the engine never became idle');
}

function startServer() {
  const child = spawn(options.qvl, serverArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      log += chunk;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
      if (m && !port) {
        port = Number(m[1]);
        resolve({ child, log: () => log });
      }
    });
    child.on('exit', (code, signal) =>
      reject(new Error(`qvl serve exited (${code ?? signal}) before listening:\n${log}`)),
    );
  });
}

async function waitHealthy() {
  for (let i = 0; i < 600; i++) {
    const r = await send('GET', '/health');
    if (r.status === 200) return;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error('/health never turned 200');
}

// ---------------------------------------------------------------- main

const started = Date.now();
const server = await startServer();
let exitInfo = null;
const exited = new Promise((resolve) =>
  server.child.on('exit', (code, signal) => {
    exitInfo = { code, signal };
    resolve();
  }),
);
await waitHealthy();

// Warm-up: every kind once, then the same mix as the run, so that caches, thread
// stacks and malloc arenas reach their working size before RSS is taken.
for (const name of Object.keys(kinds)) await runKind(name);
await load(Math.max(20, seconds * 0.2) * 1000, server.child.pid);
const warm = await idle(server.child.pid);
const warmMetrics = await metrics();

await load(seconds * 1000, server.child.pid);
if (exitInfo)
  failures.push({ kind: 'server', why: `qvl serve died: ${JSON.stringify(exitInfo)}\n${server.log()}` });
const after = exitInfo ? { rssKb: 0, fds: 0 } : await idle(server.child.pid);
const finalMetrics = exitInfo ? {} : await metrics();

const checks = [];
function check(name, ok, detail) {
  checks.push({ name, ok, detail });
}
check('no failed requests', failures.length === 0, failures);
check(
  `RSS within ${kRssTolerance * 100} % of warm-up`,
  after.rssKb <= warm.rssKb * (1 + kRssTolerance),
  `warm-up ${warm.rssKb} kB, after ${after.rssKb} kB`,
);
check('no file descriptors leaked', after.fds <= warm.fds, `warm-up ${warm.fds}, after ${after.fds}`);
// /metrics counts a response when it is written: the final /metrics call is not in its own output.
routeCounts['/metrics 200']--;
const serverRoutes = {};
for (const [key, value] of Object.entries(finalMetrics)) {
  const m = /^qvl_http_responses_total\{route="([^"]*)",code="(\d+)"\}$/.exec(key);
  if (m && m[1] !== '/health') serverRoutes[`${m[1]} ${m[2]}`] = value;
}
// A stream that ended just before its client left is a 200 on the server: the two
// counts are compared together, and the server's 499s may not exceed the streams left.
const chatCount = (tally, code) => tally[`${chat} ${code}`] ?? 0;
const server499 = chatCount(serverRoutes, 499);
for (const tally of [serverRoutes, routeCounts]) {
  tally[`${chat} 200 or 499`] = chatCount(tally, 200) + chatCount(tally, 499);
  delete tally[`${chat} 200`];
  delete tally[`${chat} 499`];
}
check(
  'streams the client left are counted as 499',
  server499 <= abandoned && (abandoned === 0 || server499 > 0),
  `server 499: ${server499}, streams left: ${abandoned}`,
);
const routeKeys = new Set([...Object.keys(serverRoutes), ...Object.keys(routeCounts)]);
const mismatched = [...routeKeys]
  .filter((k) => (serverRoutes[k] ?? 0) !== (routeCounts[k] ?? 0))
  .map((k) => `${k}: server ${serverRoutes[k] ?? 0}, client ${routeCounts[k] ?? 0}`);
check('/metrics responses equal the client counts', mismatched.length === 0, mismatched);
const outcome = (m, o) => m[`qvl_requests_total{outcome="${o}"}`] ?? 0;
const engineRan = outcome(finalMetrics, 'finished') + outcome(finalMetrics, 'cancelled');
check(
  '/metrics finished + cancelled generations equal the 200 chat answers',
  engineRan === chat200,
  `engine ${engineRan}, client ${chat200}`,
);
check('no failed generations', outcome(finalMetrics, 'failed') === 0, outcome(finalMetrics, 'failed'));
check('bursts above the queue limit got 503', (counts.burst?.[503] ?? 0) > 0, counts.burst);

if (!exitInfo) server.child.kill('SIGTERM');
const stopTimer = setTimeout(() => server.child.kill('SIGKILL'), 30_000);
await exited;
clearTimeout(stopTimer);
check('SIGTERM stops the server with exit 0', exitInfo.code === 0, exitInfo);

const report = {
  seconds,
  concurrency,
  wall_seconds: (Date.now() - started) / 1000,
  requests: counts,
  rss_kb: { warm_up: warm.rssKb, after: after.rssKb, timeline: rssTimeline },
  fds: { warm_up: warm.fds, after: after.fds },
  engine: {
    finished: outcome(finalMetrics, 'finished'),
    cancelled: outcome(finalMetrics, 'cancelled'),
    failed: outcome(finalMetrics, 'failed'),
    completion_tokens: finalMetrics.qvl_completion_tokens_total,
    finished_at_warm_up: outcome(warmMetrics, 'finished'),
    kv_pages_used: [warmMetrics.qvl_kv_cache_pages_used, finalMetrics.qvl_kv_cache_pages_used],
    prefix_cache_pages: [warmMetrics.qvl_prefix_cache_pages, finalMetrics.qvl_prefix_cache_pages],
  },
  checks,
};
if (options.report) fs.writeFileSync(options.report, JSON.stringify(report, null, 2));
const total = Object.values(counts).reduce(
  (s, byStatus) => s + Object.values(byStatus).reduce((a, b) => a + b, 0),
  0,
);
console.log(
  `soak: ${total} requests in ${report.wall_seconds.toFixed(0)} s; RSS ${warm.rssKb} -> ${after.rssKb} kB; fds ${warm.fds} -> ${after.fds}`,
);
for (const [name, byStatus] of Object.entries(counts))
  console.log(`  ${name.padEnd(18)} ${JSON.stringify(byStatus)}`);
for (const c of checks)
  console.log(`${c.ok ? 'ok  ' : 'FAIL'} ${c.name}${c.ok ? '' : `: ${JSON.stringify(c.detail, null, 1)}`}`);
process.exit(checks.every((c) => c.ok) ? 0 : 1);
