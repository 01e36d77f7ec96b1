// Builds the page into index.html, one script and one style sheet (web/CMakeLists.txt
// turns the output folder into a C++ source). Script and style carry a content hash in
// their names, so the server can let browsers cache /assets/ forever. `npm run dev`
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
