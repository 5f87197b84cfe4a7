import { defineConfig } from "vite";

// Preact through esbuild's automatic JSX runtime: no framework plugin needed.
export default defineConfig({
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    // the page's Content-Security-Policy allows no inline script and no data: URLs
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
  },
  // `npm run dev` forwards API calls to a local `kb serve`
  server: { proxy: { "/api": "http://127.0.0.1:8080" } },
});
