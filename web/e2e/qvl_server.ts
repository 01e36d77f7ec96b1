// Starts `qvl serve` with the tiny fixture model on a free loopback port and stops it
// afterwards. QVL_E2E_URL points the tests at a server that is already running instead.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const WEB_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const TEST_DATA = process.env.QVL_TEST_DATA ?? join(WEB_DIR, "..", "tests", "data");
export const TINY_MODEL = join(TEST_DATA, "tiny-qwen3vl", "model");
const QVL_BIN = process.env.QVL_BIN ?? join(WEB_DIR, "..", "build", "qvl");
const START_TIMEOUT_MS = 60_000;

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolvePort(port));
    });
  });
}

async function waitUntilReady(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`qvl serve exited with ${child.exitCode}:\n${log()}`);
    try {
      const response = await fetch(`${url}/health`);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`qvl serve did not become ready within ${START_TIMEOUT_MS} ms:\n${log()}`);
}

/** Whether the tests use a server that is already running (so cannot pick its flags). */
export const EXTERNAL_SERVER = Boolean(process.env.QVL_E2E_URL);

/** `model`: the folder to serve, the tiny fixture model unless another is named. */
export async function startServer(extraArgs: string[] = [], model = TINY_MODEL): Promise<RunningServer> {
  const external = process.env.QVL_E2E_URL;
  if (external) return { url: external.replace(/\/$/, ""), close: async () => {} };
  if (!existsSync(QVL_BIN)) throw new Error(`${QVL_BIN} not found: build qvl first, or set QVL_BIN`);
  const port = await freePort();
  const args = ["serve", "-m", model, "--host", "127.0.0.1", "--port", String(port), ...extraArgs];
  const child = spawn(QVL_BIN, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(url, child, () => output);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  return {
    url,
    close: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        const force = setTimeout(() => child.kill("SIGKILL"), 10_000);
        child.once("exit", () => {
          clearTimeout(force);
          done();
        });
        child.kill("SIGTERM");
      }),
  };
}
