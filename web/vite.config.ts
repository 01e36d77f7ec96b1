// Builds the page into index.html, its script and style sheet, and the chunks loaded on
// first use (src/lazy_modules.ts: highlight.js, KaTeX with its style sheet and fonts);
// web/CMakeLists.txt turns the output folder into a C++ source. Every file under assets/
// carries a content hash in its name, so the server can let browsers cache it forever. `npm run dev`
// proxies the API to a running `qvl serve`.
import type { Plugin } from "vite";
import { defineConfig } from "vitest/config";

// KaTeX's style sheet names each font in three formats; every browser the page supports
// reads woff2, so the others would only make the server larger.
function katexFontsWoff2Only(): Plugin {
  return {
    name: "katex-fonts-woff2-only",
    enforce: "pre",
    transform(code, id) {
      if (!/[\\/]katex[\\/].*\.css$/.test(id)) return null;
      return code.replace(/,\s*url\([^)]+\.(?:woff|ttf)\)\s*format\("(?:woff|truetype)"\)/g, "");
    },
  };
}

export default defineConfig({
  base: "/",
  plugins: [katexFontsWoff2Only()],
  build: {
    target: "es2020",
    outDir: process.env.QVL_WEB_OUT_DIR ?? "dist",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    rollupOptions: {
      output: {
        entryFileNames: "assets/app-[hash].js",
        chunkFileNames: "assets/[name]-[hash].js",
        assetFileNames: "assets/[name]-[hash][extname]",
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
