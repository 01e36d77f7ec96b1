// Builds the page into index.html, one script and one style sheet (web/CMakeLists.txt
// turns the output folder into a C++ source). Script and style carry a content hash in
// their names, so the server can let browsers cache /assets/ forever. `npm run dev`
// proxies the API to a running `qvl serve`.
import { defineConfig } from "vitest/config";

export default defineConfig({
  base: "/",
  build: {
    target: "es2020",
    outDir: process.env.QVL_WEB_OUT_DIR ?? "dist",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    rollupOptions: {
      output: {
        entryFileNames: "assets/app-[hash].js",
        chunkFileNames: "assets/app-[hash].js",
        assetFileNames: "assets/app-[hash][extname]",
        inlineDynamicImports: true,
      },
    },
  },
  server: {
    proxy: Object.fromEntries(["/v1", "/props"].map((path) => [path, process.env.QVL_URL ?? "http://127.0.0.1:8080"])),
  },
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
  },
});
