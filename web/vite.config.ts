import { defineConfig } from "vite";
import vue from "@vitejs/plugin-vue";

// The gateway serves dist/ at `/` (gateway/webui.py); `npm run dev` proxies the API to a
// gateway started by `make run` on its default port.
export default defineConfig({
  plugins: [vue()],
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false },
  server: {
    proxy: {
      "/brain": { target: "http://127.0.0.1:8080", ws: true },
      "/healthz": "http://127.0.0.1:8080",
    },
  },
});
